"""What one request to the model carries: litellm's keyword arguments, built from the
model's settings, the conversation and the tools (:func:`build`), and the notes that say
what was not sent and why (:func:`notes`).

The request layers, in order: the model and its endpoint; ``reasoning_effort`` (only to a
model that can reason, or one litellm does not know: the user asked for it); prompt-cache
breakpoints for the providers that cache only when asked (Anthropic, and Claude on Bedrock
and Vertex, or behind a LiteLLM Proxy); Ollama's ``num_ctx`` set to the window tui-agent
counts with; the conversation's id in litellm's request metadata; then ``[model] params``
last, so any litellm argument can be set or overridden. The messages go as the history
keeps them but for the reasoning text kept for display (no provider takes it back) and
thinking blocks a provider other than Anthropic's would not read; a reply stopped while it
was still thinking (kept for the display) is left out whole. The module takes litellm as
an argument: only :mod:`tui_agent.core.llm.loader` imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from tui_agent.config.models import ModelSettings
from tui_agent.core.llm.reply import whole

LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat", "hosted_vllm", "vllm", "lm_studio",
                             "llamafile", "xinference", "oobabooga", "docker_model_runner",
                             "lemonade"})
"""Providers that run on the user's own machine: nothing is billed, the price is unknown.
litellm's own names (``litellm.provider_list``); a llama.cpp server has none of its own
(``openai/`` on a local ``api_base``, which :func:`~.usage.is_local` also counts)."""
OLLAMA = frozenset({"ollama", "ollama_chat"})
THINKING_BLOCKS = "thinking_blocks"
REASONING_TEXT = "reasoning_content"

CACHE_POINTS: tuple[dict[str, Any], ...] = (
    {"location": "message", "role": "system"},
    {"location": "message", "index": -1},
)
"""Breakpoints on the system prompt and on the latest message: each request then reads
the one before it from the cache (the moving breakpoint is what caches a long tool loop)."""
TOOLS_POINT: dict[str, Any] = {"location": "tool_config"}


@dataclass(frozen=True)
class Route:
    """Where a model's requests go, as litellm reads its name."""

    provider: str
    model: str
    """The name without the provider prefix."""
    known: bool
    """Whether litellm has facts (price, window, abilities) for the model."""
    reasons: bool
    """Whether litellm knows the model can reason (False for an unknown model)."""
    always_reasons: bool = False
    """Whether litellm knows the model refuses ``reasoning_effort = "none"``."""
    budget: int | None = None
    """The thinking budget litellm turns the settings' ``reasoning_effort`` into for
    Claude (``thinking.budget_tokens``); None when it sends none (no effort, or adaptive
    thinking)."""

    @property
    def claude(self) -> bool:
        """Anthropic's models, directly or through Bedrock or Vertex."""
        return self.provider == "anthropic" or (
            self.provider in ("bedrock", "vertex_ai", "vertex_ai_beta")
            and "claude" in self.model.lower())


def route(litellm: ModuleType, settings: ModelSettings) -> Route:
    """How litellm routes ``settings``' model (an unroutable one reads as provider "")."""
    name = settings.name or ""
    try:
        model, provider, _, _ = litellm.get_llm_provider(name, api_base=settings.api_base)
    except Exception:
        return Route("", name, known=False, reasons=False)
    always = False
    try:
        info = litellm.get_model_info(name, custom_llm_provider=provider)
        known = True
        reasons = bool(info.get("supports_reasoning"))
        always = info.get("supports_none_reasoning_effort") is False  # said, not unknown
    except Exception:  # a model litellm has no facts for
        known = reasons = False
    if known and not reasons:
        try:  # litellm's own check also reads the provider's defaults
            reasons = bool(litellm.supports_reasoning(model=name, custom_llm_provider=provider))
        except Exception:
            reasons = False
    where = Route(str(provider), str(model), known=known, reasons=reasons,
                  always_reasons=always and reasons)
    return replace(where, budget=_budget(litellm, settings, where))


def _budget(litellm: ModuleType, settings: ModelSettings, where: Route) -> int | None:
    """litellm's thinking budget for Claude at the settings' effort (its own mapping)."""
    if not where.claude or not thinking(settings, where):
        return None
    try:
        mapped = litellm.AnthropicConfig.map_reasoning_effort(
            settings.reasoning_effort, where.model, where.provider)
    except Exception:  # an effort or a model litellm does not map
        return None
    budget = (mapped or {}).get("budget_tokens")
    return budget if isinstance(budget, int) else None


def max_tokens(settings: ModelSettings, where: Route) -> int | None:
    """The ``max_tokens`` sent: the settings', but for Claude thinking with a budget at or
    above it (Anthropic refuses ``max_tokens`` not above ``budget_tokens``, and it counts
    the thinking in it): then the budget plus the settings' number, which meant the
    reply's length."""
    given = settings.max_tokens
    if given is not None and where.budget is not None and given <= where.budget \
            and thinking(settings, where):
        return where.budget + given
    return given


def sends_effort(settings: ModelSettings, where: Route) -> bool:
    """Whether ``reasoning_effort`` goes: set, and the model can reason, or litellm does not
    know the model (a local or new one: the user asked for it, and litellm translates it,
    e.g. Ollama's ``think``); but never "none" to a model known to refuse it."""
    effort = settings.reasoning_effort
    if effort == "none" and where.always_reasons:
        return False
    return effort is not None and (where.reasons or not where.known)


def thinking(settings: ModelSettings, where: Route) -> bool:
    """Whether the request turns thinking on."""
    return sends_effort(settings, where) and settings.reasoning_effort != "none"


def caches(settings: ModelSettings, where: Route) -> bool:
    """Whether the request marks cache breakpoints: the providers that cache only when asked,
    and a LiteLLM Proxy's model named for Claude (``litellm_proxy/claude-...``): litellm
    puts the marks on the messages and passes the tools' point on in the body, and the
    proxy's litellm applies both to its Anthropic deployment."""
    return settings.prompt_cache and (where.claude or where.provider == "litellm_proxy" and any(
        word in where.model.lower() for word in ("claude", "anthropic")))


def notes(settings: ModelSettings, where: Route) -> list[str]:
    """What the settings ask that the request leaves out, in words for the person."""
    said = []
    name = settings.name or "the model"
    effort = settings.reasoning_effort
    if effort is not None and effort != "none" and not sends_effort(settings, where):
        said.append(f"{name} does not reason: reasoning_effort = \"{effort}\" is not sent")
    if effort == "none" and where.always_reasons:
        said.append(f"{name} cannot stop reasoning: reasoning_effort = \"none\" is not sent "
                    "(it thinks as much as it does by default)")
    if where.claude and thinking(settings, where) and settings.temperature not in (None, 1):
        said.append(f"temperature {settings.temperature:g} is not sent: Anthropic takes only "
                    f"1 while {name} thinks (reasoning_effort = \"{effort}\")")
    sent = max_tokens(settings, where)
    if sent != settings.max_tokens:
        said.append(f"max_tokens {settings.max_tokens} is sent as {sent}: Anthropic counts "
                    f"the thinking in it, and {name} may think {where.budget} tokens "
                    f"(reasoning_effort = \"{effort}\"), so the reply keeps its "
                    f"{settings.max_tokens}")
    return said


def unthinking(settings: ModelSettings, where: Route) -> ModelSettings:
    """``settings`` for a request that should not think (compaction's summary): effort
    "none" where it would think and the model can stop (Anthropic then gets no
    ``thinking``); a model that cannot stop keeps the effort asked for."""
    if not thinking(settings, where) or where.always_reasons:
        return settings
    return settings.model_copy(update={"reasoning_effort": "none"})


def build(settings: ModelSettings, where: Route, messages: Sequence[dict[str, Any]],
          tools: Sequence[dict[str, Any]], *, window: int | None = None,
          session_id: str | None = None, reasoning: bool = True) -> dict[str, Any]:
    """litellm's ``acompletion`` arguments, but the endpoint's key (:class:`LLM` adds it);
    without ``reasoning``, a request that does not think where the model allows it."""
    s = settings if reasoning else unthinking(settings, where)
    kwargs: dict[str, Any] = {
        "model": s.name, "messages": outgoing(messages, where), "stream": True,
        "stream_options": {"include_usage": True}, "num_retries": 0, "timeout": s.timeout,
    }
    if tools:
        kwargs["tools"] = list(tools)
    if s.api_base:
        kwargs["api_base"] = s.api_base
    if s.temperature is not None and not (where.claude and thinking(s, where)
                                          and s.temperature != 1):
        kwargs["temperature"] = s.temperature
    if s.max_tokens is not None:
        kwargs["max_tokens"] = max_tokens(s, where)
    if sends_effort(s, where):
        kwargs["reasoning_effort"] = s.reasoning_effort
    if caches(s, where):
        kwargs["cache_control_injection_points"] = [
            *CACHE_POINTS, *([TOOLS_POINT] if tools else [])]
    if where.provider in OLLAMA and window:
        kwargs["num_ctx"] = window  # else Ollama cuts a longer prompt silently
    if session_id:
        tag_session(kwargs, session_id, proxy=where.provider == "litellm_proxy")
    return merged(kwargs, s.params)


def merged(kwargs: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` over ``kwargs``: each argument replaced, but the dicts that gather many
    keys (``metadata``, ``extra_body``, ``extra_headers``) merged, so a user's own keys
    keep ours beside them unless they name the same key."""
    out = dict(kwargs)
    for key, value in params.items():
        if key in MERGED and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


MERGED = frozenset({"metadata", "extra_body", "extra_headers"})


def tag_session(kwargs: dict[str, Any], session_id: str, *, proxy: bool) -> None:
    """Name the conversation the request belongs to, where litellm and the LiteLLM Proxy
    read it: ``litellm_session_id`` and ``metadata.session_id`` (litellm's own logging and
    callbacks); to a proxy (``litellm_proxy/``), the same two keys in the request body,
    which its spend logs group by."""
    kwargs["litellm_session_id"] = session_id
    kwargs["metadata"] = {"session_id": session_id}
    if proxy:
        kwargs["extra_body"] = {"litellm_session_id": session_id,
                                "metadata": {"session_id": session_id}}


def outgoing(messages: Sequence[dict[str, Any]], where: Route) -> list[dict[str, Any]]:
    """The messages as the provider takes them: the reasoning text kept for display is left
    out (no provider reads it back, and some refuse it); thinking blocks go only to Claude
    (or a LiteLLM Proxy, which passes them on), and only whole ones (a block a cut stream
    left without its signature is refused). A reply stopped while it was still thinking
    leaves nothing to send: it is left out (the turns around it are the user's)."""
    out = []
    for message in messages:
        if message.get("role") != "assistant" or not (
                REASONING_TEXT in message or THINKING_BLOCKS in message):
            out.append(message)
            continue
        sent = {k: v for k, v in message.items() if k not in (REASONING_TEXT, THINKING_BLOCKS)}
        blocks = [b for b in message.get(THINKING_BLOCKS) or () if whole(b)]
        if blocks and (where.claude or where.provider == "litellm_proxy"):
            sent[THINKING_BLOCKS] = blocks
        elif not sent.get("content") and not sent.get("tool_calls"):
            continue  # a reply stopped while thinking: nothing of it to send back
        out.append(sent)
    return out

