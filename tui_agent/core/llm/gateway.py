"""The team gateway: what a LiteLLM Proxy in front of the providers offers.

A team that runs a LiteLLM Proxy (keys, budgets, rate limits, spend logs) points
tui-agent at it with ``--model litellm_proxy/NAME --api-base URL`` and its key
(``[model] api_key_env``, or ``LITELLM_PROXY_API_KEY`` as litellm reads it; :mod:`.proxy`
finds both).
:func:`gateway_models` lists the names the proxy serves, as the model picker offers them.
The requests themselves go through litellm like any other; the proxy's refusals (budget,
rate limit) are named by :mod:`.errors`.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from tui_agent.config.models import ModelSettings
from tui_agent.core.llm.bodies import said
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.llm.proxy import PREFIX, proxy_of
from tui_agent.core.llm.windows import ASK_TIMEOUT


def gateway_models(settings: ModelSettings) -> list[str]:
    """The models the gateway serves, as model strings (``litellm_proxy/NAME``), in its
    order; [] when ``settings`` names no gateway. Blocking (one request, a short
    timeout); raises :class:`LLMError` when the gateway does not answer or refuses the key."""
    proxy = proxy_of(settings)
    if proxy is None:
        return []
    base, key = proxy.base, proxy.key
    request = urllib.request.Request(f"{base}/v1/models", headers={
        "Accept": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})})
    where = f"the LiteLLM gateway at {base}"
    try:
        with urllib.request.urlopen(request, timeout=min(ASK_TIMEOUT, settings.timeout)
                                    ) as response:  # noqa: S310
            listing = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        found = said(exc.read().decode("utf-8", "replace"))
        words = f": {found.message}" if found is not None else ""
        if exc.code in (401, 403):
            raise LLMError("auth", f"{where} refused the key while listing its models "
                           f"({exc.code}){words}. Give it the key with [model] api_key_env"
                           ) from None
        raise LLMError("server", f"{where} failed to list its models ({exc.code}){words}"
                       ) from None
    except (OSError, ValueError) as exc:
        raise LLMError("unreachable", f"cannot list the models of {where}: {exc}") from None
    data = listing.get("data") if isinstance(listing, dict) else None
    return [PREFIX + str(entry["id"]) for entry in data or []
            if isinstance(entry, dict) and entry.get("id")]
