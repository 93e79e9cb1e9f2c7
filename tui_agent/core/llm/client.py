"""The LLM client: one model configuration, its checks, its facts and its stream.

:meth:`LLM.stream` yields :class:`~tui_agent.core.events.TextDelta` and
:class:`~tui_agent.core.events.Retrying` events while a reply streams, then one
:class:`Reply`. Retries (429, 5xx, connection errors, timeouts) happen only
before the first token: after that a failure keeps what arrived and raises
:class:`StreamCut`.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing, suppress
from types import ModuleType
from typing import Any, Protocol

from tui_agent.config.models import ModelSettings
from tui_agent.core.events import Retrying, TextDelta, Usage
from tui_agent.core.llm.errors import LLMError, classify
from tui_agent.core.llm.loader import encoder, load_litellm
from tui_agent.core.llm.reply import Reply, StreamCut, ToolCallRequest, rough_count
from tui_agent.core.llm.windows import ServedModel, ask_server, asks_server

BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 60.0

NO_MODEL_HELP = (
    "no model is configured. Point tui-agent at one:\n"
    "  - a hosted model: export OPENAI_API_KEY=... (or ANTHROPIC_API_KEY, GEMINI_API_KEY, ...)\n"
    "    and pass --model openai/gpt-4o-mini (any litellm model string);\n"
    "  - a local Ollama: --model ollama/llama3.1 (it listens on http://localhost:11434);\n"
    "  - any OpenAI-compatible server: --model openai/NAME --api-base http://HOST:PORT/v1;\n"
    "  - or set [model] name = \"...\" in the config file (tui-agent config --path shows where)."
)


class ChatModel(Protocol):
    """What the agent needs of a model: :class:`LLM`, or the offline demo's scripted one."""

    @property
    def model(self) -> str | None: ...

    def stream(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()
               ) -> AsyncGenerator[TextDelta | Retrying | Reply, None]: ...


class LLM:
    """Streams chat completions for one model configuration."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self._checked = False
        self._priced: bool | None = None
        self._window: int | None = None
        self._server_said: ServedModel | None = None

    @property
    def model(self) -> str | None:
        return self.settings.name

    def takes(self) -> set[str]:
        """What the model reads besides text: ``image`` (``[model] vision``, else what a
        local server says of it, else litellm's word) and ``audio`` (likewise); unknown
        models read neither. Blocking the first time (imports litellm, or asks the
        server)."""
        said = {"image": self.settings.vision, "audio": self.settings.audio}
        checks = {"image": "supports_vision", "audio": "supports_audio_input"}
        served = self._served() if None in said.values() else None
        found = set()
        for kind, given in said.items():
            if given is None and served is not None and served.kinds is not None:
                given = kind in served.kinds
            elif given is None and self.settings.name and not asks_server(self.settings.name):
                try:
                    given = bool(getattr(load_litellm(), checks[kind])(model=self.settings.name))
                except Exception:  # a model litellm does not know
                    given = False
            if given:
                found.add(kind)
        return found

    def check(self) -> None:
        """Fail early, and clearly, on what no request could fix: no model, a model
        litellm cannot route, a provider key that is not set. Blocking (imports litellm)."""
        if self._checked:
            return
        name = self.settings.name
        if not name:
            raise LLMError("no_model", NO_MODEL_HELP)
        litellm = load_litellm()
        try:
            _, provider, _, _ = litellm.get_llm_provider(name, api_base=self.settings.api_base)
        except Exception:
            raise LLMError("unknown_model", (
                f"unknown model '{name}': litellm cannot tell which provider serves it. "
                "Prefix the provider, e.g. openai/{0}, anthropic/{0}, ollama/{0}, or see "
                "https://docs.litellm.ai/docs/providers").format(name)) from None
        if not self.settings.api_key and not self.settings.api_base:
            missing = _missing_keys(litellm, name)
            if missing:
                raise LLMError("no_api_key", (
                    f"no API key for provider '{provider}' (model {name}): set "
                    f"{' or '.join(missing)} in the environment, or [model] api_key_env in "
                    "the config"))
        self._checked = True

    def _ready(self) -> ModuleType:
        """litellm, once :meth:`check` has passed; one trip to a thread does both."""
        self.check()
        return load_litellm()

    def _request(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]],
                 litellm: ModuleType | None = None) -> dict[str, Any]:
        s = self.settings
        kwargs: dict[str, Any] = {
            "model": s.name, "messages": list(messages), "stream": True,
            "stream_options": {"include_usage": True}, "num_retries": 0, "timeout": s.timeout,
        }
        if tools:
            kwargs["tools"] = list(tools)
        if s.api_base:
            kwargs["api_base"] = s.api_base
        if s.api_key:
            kwargs["api_key"] = s.api_key
        elif s.api_base and not (litellm is not None and s.name and _keys_set(litellm, s.name)):
            # A local OpenAI-compatible server ignores the key, but the SDK insists on one;
            # a provider key set in the environment (OPENAI_API_KEY) goes as it is.
            kwargs["api_key"] = "no-key"
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if s.max_tokens is not None:
            kwargs["max_tokens"] = s.max_tokens
        return kwargs

    async def stream(self, messages: Sequence[dict[str, Any]],
                     tools: Sequence[dict[str, Any]] = ()
                     ) -> AsyncGenerator[TextDelta | Retrying | Reply, None]:
        """Stream one reply: deltas (and retry notices), then the :class:`Reply`."""
        litellm = await asyncio.to_thread(self._ready)
        attempts = self.settings.max_retries + 1
        for attempt in range(1, attempts + 1):
            reply = Reply()
            try:
                async with aclosing(self._one_try(litellm, messages, tools, reply)) as one:
                    async for item in one:
                        yield item
                yield reply
                return
            except LLMError as exc:
                if isinstance(exc, StreamCut) or not exc.retriable or attempt == attempts:
                    raise
                delay = self._backoff(attempt, exc.retry_after)
                yield Retrying(attempt, attempts - 1, round(delay, 2), str(exc))
                await asyncio.sleep(delay)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, RETRY_AFTER_CAP)
        base = min(self.settings.retry_backoff * 2.0 ** (attempt - 1), BACKOFF_CAP)
        return base * random.uniform(0.75, 1.25)  # jitter keeps clients from retrying in step

    async def _one_try(self, litellm: ModuleType, messages: Sequence[dict[str, Any]],
                       tools: Sequence[dict[str, Any]],
                       reply: Reply) -> AsyncGenerator[TextDelta, None]:
        parts: list[str] = []
        calls: dict[int, list[str]] = {}  # index -> [id, name, arguments...]
        usage: Any = None
        try:
            response = await litellm.acompletion(**self._request(messages, tools, litellm))
        except Exception as exc:
            raise self._classify(litellm, exc) from None
        try:
            async for chunk in response:
                choices = chunk.choices
                if choices:
                    choice = choices[0]
                    delta = choice.delta
                    content = delta.content
                    if content:
                        parts.append(content)
                        yield TextDelta(content)
                    if delta.tool_calls:
                        _merge_tool_deltas(calls, delta.tool_calls)
                    if choice.finish_reason:
                        reply.finish_reason = choice.finish_reason
                usage = getattr(chunk, "usage", None) or usage
        except Exception as exc:
            error = self._classify(litellm, exc)
            if not parts and not calls:
                raise error from None
            _fill(reply, parts, calls, incomplete=True)
            raise StreamCut(f"the reply was cut off mid-stream ({error})", reply) from None
        finally:
            await _close(response)
            if usage is not None:
                reply.usage = self._usage(litellm, usage)
        # litellm synthesizes finish_reason='stop' when a stream just ends; the
        # provider's own finish reason is only in these attributes.
        provider_finished = (getattr(response, "received_finish_reason", "stop")
                             or getattr(response, "intermittent_finish_reason", None))
        if not provider_finished and not parts and not calls:
            raise LLMError("server", "the reply stream ended before anything arrived",
                           retriable=True)
        _fill(reply, parts, calls, incomplete=not provider_finished)
        if reply.incomplete:
            raise StreamCut("the reply stream ended without a finish reason: the "
                            "connection was cut mid-reply", reply)

    def window(self) -> int | None:
        """Tokens of input the model takes: ``[model] context_window``; else, for a local
        server (Ollama, vLLM, LM Studio), what the server says (:mod:`.windows`); else
        litellm's ``max_input_tokens`` for it; None when none knows. Blocking (imports
        litellm, or asks the server with a short timeout)."""
        if self.settings.context_window is not None:
            return self.settings.context_window
        if asks_server(self.settings.name):
            served = self._served()
            return served.window if served is not None else None
        if self._window is None and self.settings.name:
            try:
                info = load_litellm().get_model_info(self.settings.name)
                self._window = int(info.get("max_input_tokens") or 0)
            except Exception:  # a model litellm does not know
                self._window = 0
        return self._window or None

    def _served(self) -> ServedModel | None:
        """What the local server says of the model, asked once it answers (a server
        that does not answer is asked again next time: it may have been starting)."""
        if self._server_said is None and asks_server(self.settings.name):
            self._server_said = ask_server(self.settings)
        return self._server_said

    def counter(self) -> Callable[[str], int]:
        """Tokens of a text for this model, with the tiktoken encoding litellm's own
        ``token_counter`` picks for it. Blocking (imports litellm, loads the encoding)."""
        try:
            encode = encoder(self.settings.name or "")
        except Exception:  # an encoding that cannot load: about four characters a token
            return rough_count
        return lambda text: len(encode(text))

    def unbilled(self) -> Usage:
        """The usage of requests that billed nothing: cost 0.0 for a model litellm has a
        price for, unknown (None) for one it has not, as a reply's own cost would be."""
        litellm = sys.modules.get("litellm")
        if self._priced is None and litellm is not None:
            try:
                litellm.cost_per_token(model=self.settings.name, prompt_tokens=1,
                                       completion_tokens=1)
                self._priced = True
            except Exception:
                self._priced = False
        return Usage(cost=None if self._priced is False else 0.0)

    def _usage(self, litellm: ModuleType, usage: Any) -> Usage:
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        cost: float | None
        if not prompt and not completion:
            return Usage(cost=None)  # the provider reported nothing: unknown, not free
        try:
            p, c = litellm.cost_per_token(model=self.settings.name, prompt_tokens=prompt,
                                          completion_tokens=completion)
            cost = float(p) + float(c)
        except Exception:
            cost = None  # not in litellm's price list (local or custom model): unknown
        total = int(getattr(usage, "total_tokens", 0) or 0) or prompt + completion
        return Usage(prompt, completion, total, cost)

    def _classify(self, litellm: ModuleType, exc: BaseException) -> LLMError:
        return classify(litellm, exc, self.settings)


def _keys_set(litellm: ModuleType, model: str) -> bool:
    """Whether the provider's key for ``model`` is in the environment."""
    try:
        return bool(litellm.validate_environment(model).get("keys_in_environment"))
    except Exception:
        return False


def _missing_keys(litellm: ModuleType, model: str) -> list[str]:
    try:
        env = litellm.validate_environment(model)
    except Exception:
        return []
    if env.get("keys_in_environment"):
        return []
    # Some providers list their base URL as "missing" (Ollama has a default): only keys count.
    return [k for k in env.get("missing_keys", []) if "KEY" in k or "TOKEN" in k]


def _merge_tool_deltas(calls: dict[int, list[str]], deltas: Any) -> None:
    for d in deltas:
        slot = calls.setdefault(d.index or 0, ["", "", ""])
        if d.id:
            slot[0] = d.id
        fn = d.function
        if fn is not None:
            if fn.name:
                slot[1] = fn.name
            if fn.arguments:
                slot[2] += fn.arguments


def _fill(reply: Reply, parts: list[str], calls: dict[int, list[str]], *, incomplete: bool) -> None:
    reply.text = "".join(parts)
    reply.incomplete = incomplete
    if not incomplete:  # half a tool call must never run
        reply.tool_calls = [ToolCallRequest(cid or f"call_{i}", name, args)
                            for i, (cid, name, args) in sorted(calls.items())]


async def _close(response: Any) -> None:
    aclose = getattr(response, "aclose", None)
    if aclose is not None:
        with suppress(Exception):  # closing a broken stream may fail again; nothing to keep
            await aclose()
