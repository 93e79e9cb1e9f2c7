"""Where the team gateway is: whether a model goes through a LiteLLM Proxy
(``litellm_proxy/NAME``), and the proxy's address and key as litellm itself finds them
(``[model] api_base`` and key, else ``LITELLM_PROXY_API_BASE`` and
``LITELLM_PROXY_API_KEY``). One place for both, read by :mod:`.gateway` (the models it
serves), :mod:`.windows` (what it says of one) and :mod:`.errors` (its refusals)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tui_agent.config.models import ModelSettings

PREFIX = "litellm_proxy/"


@dataclass(frozen=True)
class Proxy:
    """A LiteLLM Proxy's address and the key to send it."""

    base: str
    """Its root URL, without a trailing ``/v1``."""
    key: str | None


def is_gateway(settings: ModelSettings) -> bool:
    """Whether the model is served through a LiteLLM Proxy."""
    return (settings.name or "").startswith(PREFIX)


def proxy_of(settings: ModelSettings) -> Proxy | None:
    """The proxy ``settings`` reach; None when its address is nowhere (or no proxy)."""
    base = settings.api_base or os.environ.get("LITELLM_PROXY_API_BASE")
    if not is_gateway(settings) or not base:
        return None
    return Proxy(base.rstrip("/").removesuffix("/v1"),
                 settings.api_key or os.environ.get("LITELLM_PROXY_API_KEY"))
