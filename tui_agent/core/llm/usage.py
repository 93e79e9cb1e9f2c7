"""Usage and cost of a reply: the provider's counts as litellm exposes them (cache reads
and writes, reasoning tokens) read into :class:`~tui_agent.core.events.Usage`, and the
cost from litellm's usage-aware pricing (cache reads and writes at their own prices).

A model on the user's own machine (Ollama, vLLM, LM Studio, llamafile, or an ``openai/``
model on a loopback or private ``api_base``) bills nothing anyone knows of: its cost is
unknown (None), never 0.0, even where litellm lists a price of 0. So is a hosted model's
that litellm prices at 0.0 without listing it (it makes up an entry for some).
"""

from __future__ import annotations

import ipaddress
from types import ModuleType
from typing import Any
from urllib.parse import urlparse

from tui_agent.core.events import Usage
from tui_agent.core.llm.request import LOCAL_PROVIDERS, Route

OPENAI_COMPATIBLE = frozenset({"openai", "custom_openai", "openai_like", "text-completion-openai"})


def is_local(where: Route, api_base: str | None) -> bool:
    """Whether the model runs on the user's own machine or network (its price is unknown)."""
    if where.provider in LOCAL_PROVIDERS:
        return True
    return where.provider in OPENAI_COMPATIBLE and bool(api_base) and _private(api_base or "")


def looks_local(model: str, api_base: str | None) -> bool:
    """:func:`is_local` told from the model's name alone (its provider prefix), without
    litellm's routing: what a front end can say before litellm is imported."""
    provider = model.split("/", 1)[0] if "/" in model else ""
    if provider in LOCAL_PROVIDERS:
        return True
    return provider in OPENAI_COMPATIBLE and bool(api_base) and _private(api_base or "")


def _private(url: str) -> bool:
    host = urlparse(url if "//" in url else f"//{url}").hostname or ""
    if host == "localhost" or host.endswith((".local", ".localhost", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _count(value: Any, *names: str) -> int:
    """The first of ``names`` that ``value`` has as a positive int (0 if none)."""
    for name in names:
        found = getattr(value, name, None) if value is not None else None
        if isinstance(found, int) and not isinstance(found, bool) and found > 0:
            return found
    return 0


def usage_of(litellm: ModuleType, usage: Any, model: str, *, local: bool) -> Usage:
    """litellm's usage object as our :class:`Usage`, with its cost (None when unknown)."""
    prompt = _count(usage, "prompt_tokens")
    completion = _count(usage, "completion_tokens")
    if not prompt and not completion:
        return Usage(cost=None)  # the provider reported nothing: unknown, not free
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    read = _count(prompt_details, "cached_tokens") or _count(
        usage, "cache_read_input_tokens", "_cache_read_input_tokens")
    written = _count(prompt_details, "cache_write_tokens", "cache_creation_tokens") or _count(
        usage, "cache_creation_input_tokens", "_cache_creation_input_tokens")
    reasoning = _count(completion_details, "reasoning_tokens") or _count(
        usage, "reasoning_tokens")
    total = _count(usage, "total_tokens") or prompt + completion
    cost = None if local else price(litellm, usage, model)
    return Usage(prompt, completion, total, cost, read, written, reasoning)


def price(litellm: ModuleType, usage: Any, model: str) -> float | None:
    """The list price of ``usage`` on ``model`` (cache reads and writes, reasoning priced
    as litellm prices them); else the cost the response reported itself (a LiteLLM Proxy
    does); else unknown."""
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model, usage_object=usage)
        cost = float(prompt_cost) + float(completion_cost)
        if cost or listed(litellm, model):
            return cost
    except Exception:  # not in litellm's price list (a custom model, a proxy's alias)
        pass
    own = getattr(usage, "cost", None)
    return float(own) if isinstance(own, int | float) and not isinstance(own, bool) else None


def priced(litellm: ModuleType, model: str, *, local: bool) -> bool:
    """Whether litellm has a price for ``model`` (a local model has none that counts)."""
    if local:
        return False
    try:
        cost = litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
    except Exception:
        return False
    return bool(sum(cost)) or listed(litellm, model)


def listed(litellm: ModuleType, model: str) -> bool:
    """Whether litellm's price list has an entry for ``model``: for a model it lacks
    (a Gemini preview, say) litellm makes one up priced at 0.0, which is not a price."""
    bare = model.split("/", 1)[-1]
    return any(name in litellm.model_cost for name in (model, bare))
