"""The LLM client: one model configuration, its checks, its facts and its stream.

:meth:`LLM.stream` yields :class:`~tui_agent.core.events.ReasoningDelta`,
:class:`~tui_agent.core.events.TextDelta` and :class:`~tui_agent.core.events.Retrying`
events while a reply streams, then one :class:`Reply` (a
:class:`~tui_agent.core.events.Notice` first for a setting the model does not take). The
request is built in :mod:`.request`, the stream put together in :mod:`.stream`, usage and
cost read in :mod:`.usage`. Retries (429, 5xx, connection errors, timeouts) happen only
before the first token: after that a failure keeps what arrived and raises
:class:`StreamCut`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing, suppress
from dataclasses import replace
from types import ModuleType
from typing import Any, Protocol

from tui_agent.config.models import ModelSettings
from tui_agent.core.events import Notice, ReasoningDelta, Retrying, TextDelta, Usage
from tui_agent.core.llm.errors import LLMError, classify
from tui_agent.core.llm.loader import encoder, load_litellm
from tui_agent.core.llm.reply import Reply, StreamCut, rough_count
from tui_agent.core.llm.request import OLLAMA, Route, build, notes, route
from tui_agent.core.llm.stream import Assembly
from tui_agent.core.llm.usage import is_local, looks_local, priced, usage_of
from tui_agent.core.llm.windows import ServedModel, ask_server, asks_server
from tui_agent.tools.text import clean

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


Streamed = TextDelta | ReasoningDelta | Retrying | Notice | Reply
"""What :meth:`LLM.stream` yields."""


class ChatModel(Protocol):
    """What the agent needs of a model: :class:`LLM`, or the offline demo's scripted one."""

    @property
    def model(self) -> str | None: ...

    def stream(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()
               ) -> AsyncGenerator[Streamed, None]: ...


class LLM:
    """Streams chat completions for one model configuration."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self._checked = False
        self._priced: bool | None = None
        self._listed: bool | None = None
        """Whether litellm's price file names the model, read before litellm is imported
        (:meth:`read_price_list`); what a request learns from litellm wins."""
        self._window: int | None = None
        self._route: Route | None = None
        self._told: set[str] = set()
        self.session_id: str | None = None
        """The conversation the requests belong to (the agent sets it before each one):
        sent in litellm's request metadata, so a LiteLLM Proxy's spend logs group it."""
        self._server_said: ServedModel | None = None
        self._count: Callable[[str], int] | None = None

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

    def where(self) -> Route:
        """How litellm routes the model (provider, whether it can reason). Blocking. For an
        Ollama model whether it reasons is the server's word (its ``thinking``
        capability): litellm's facts on one never say; a server that does not tell leaves
        it unknown, and what was asked is sent."""
        if self._route is None:
            where = route(load_litellm(), self.settings)
            if where.provider in OLLAMA:
                said = self._served()
                reasons = said.reasons if said is not None else None
                where = replace(where, known=reasons is not None, reasons=bool(reasons),
                                always_reasons=False)
            self._route = where
        return self._route

    def notes(self) -> list[str]:
        """What the settings ask that requests leave out, and why (e.g. "MODEL does not
        reason: reasoning_effort is not sent"), for the front ends. Blocking (litellm)."""
        return notes(self.settings, self.where()) if self.settings.name else []

    def _request(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]],
                 litellm: ModuleType | None = None, *, reasoning: bool = True
                 ) -> dict[str, Any]:
        s = self.settings
        where = self.where()
        window = self.window() if where.provider in OLLAMA else None
        kwargs = build(s, where, messages, tools, window=window, session_id=self.session_id,
                       reasoning=reasoning)
        if s.api_key:
            kwargs.setdefault("api_key", s.api_key)
        elif s.api_base and not (litellm is not None and s.name and _keys_set(litellm, s.name)):
            # A local OpenAI-compatible server ignores the key, but the SDK insists on one;
            # a provider key set in the environment (OPENAI_API_KEY) goes as it is.
            kwargs.setdefault("api_key", "no-key")
        return kwargs

    def _prepare(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]],
                 reasoning: bool = True) -> tuple[ModuleType, dict[str, Any], list[str]]:
        """litellm, the request's arguments and the notes not told yet (in a thread)."""
        litellm = self._ready()
        kwargs = self._request(messages, tools, litellm, reasoning=reasoning)
        if self._priced is None:
            self._priced = priced(litellm, self.settings.name or "", local=self._local())
        new = [n for n in self.notes() if n not in self._told]
        self._told.update(new)
        return litellm, kwargs, new

    async def stream(self, messages: Sequence[dict[str, Any]],
                     tools: Sequence[dict[str, Any]] = (), *, reasoning: bool = True
                     ) -> AsyncGenerator[Streamed, None]:
        """Stream one reply: a :class:`Notice` for each setting not sent (once per model),
        deltas of reasoning and text (and retry notices), then the :class:`Reply`.
        ``reasoning=False`` asks the model not to think, where it can stop (compaction's
        summary: no thinking budget spent on it)."""
        litellm, kwargs, new = await asyncio.to_thread(self._prepare, messages, tools,
                                                       reasoning)
        for note in new:
            yield Notice(clean(note))  # it names the model as the config spelled it
        attempts = self.settings.max_retries + 1
        for attempt in range(1, attempts + 1):
            reply = Reply()
            try:
                async with aclosing(self._one_try(litellm, kwargs, reply)) as one:
                    async for item in one:
                        yield item
                if reply.reasoning and not reply.usage.reasoning_tokens:
                    reply.usage = await asyncio.to_thread(self._estimated, reply)
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

    async def _one_try(self, litellm: ModuleType, kwargs: dict[str, Any],
                       reply: Reply) -> AsyncGenerator[TextDelta | ReasoningDelta, None]:
        got = Assembly()
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as exc:
            raise self._classify(litellm, exc) from None
        try:
            async for chunk in response:
                for event in got.feed(chunk):
                    yield event
        except Exception as exc:
            error = self._classify(litellm, exc)
            if not got.started:
                raise error from None
            got.fill(reply, incomplete=True)
            raise StreamCut(f"the reply was cut off mid-stream ({error})", reply) from None
        finally:
            await _close(response)
            if got.usage is not None:
                reply.usage = self._usage(litellm, got.usage)
        # litellm synthesizes finish_reason='stop' when a stream just ends; the
        # provider's own finish reason is only in these attributes.
        provider_finished = (getattr(response, "received_finish_reason", "stop")
                             or getattr(response, "intermittent_finish_reason", None))
        if not provider_finished and not got.started:
            raise LLMError("server", "the reply stream ended before anything arrived",
                           retriable=True)
        got.fill(reply, incomplete=not provider_finished)
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

    def _estimated(self, reply: Reply) -> Usage:
        """``reply``'s usage with its reasoning tokens estimated from its thinking text,
        for a provider that sent thinking but no count of it (Anthropic counts thinking
        in ``output_tokens`` only): the model's counter, at most the completion tokens.
        Blocking (the counter loads its encoding once)."""
        usage = reply.usage
        if not usage.completion_tokens:
            return usage
        if self._count is None:
            self._count = self.counter()
        return replace(usage, reasoning_tokens=max(1, min(self._count(reply.reasoning),
                                                          usage.completion_tokens)))

    def unbilled(self) -> Usage:
        """The usage of requests that billed nothing: cost 0.0 for a model litellm has a
        price for, unknown (None) for one it has not or a local one, as a reply's own cost
        would be. Never blocking (a turn's ``finally`` calls it on the event loop): before
        a request was prepared, which is where the route and the price are learnt, the
        cost is unknown."""
        return Usage(cost=0.0 if self._priced else None)

    def price_known(self) -> bool | None:
        """Whether the model has a price: False at once for a model on the user's own
        machine (told by its name and ``api_base``, without litellm) or one litellm's
        price file does not name (once :meth:`read_price_list` ran), else what the first
        request learnt (None until then). A front end shows "cost unknown" from the
        start for False, not ``$0.0000``. Never blocking."""
        if self._priced is None and (self._listed is False or looks_local(
                self.settings.name or "", self.settings.api_base)):
            return False
        return self._priced

    def read_price_list(self) -> None:
        """Learn, without importing litellm, whether its price list names the model (a
        file read: call it from a thread, after the first frame). An unlisted hosted
        model then says "cost unknown" before its first request too."""
        if self._priced is None and self._listed is None:
            from tui_agent.core.llm.price_list import listed_in_file

            self._listed = listed_in_file(self.settings.name or "")

    def _local(self) -> bool:
        return is_local(self.where(), self.settings.api_base)

    def _usage(self, litellm: ModuleType, usage: Any) -> Usage:
        return usage_of(litellm, usage, self.settings.name or "", local=self._local())

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


async def _close(response: Any) -> None:
    aclose = getattr(response, "aclose", None)
    if aclose is not None:
        with suppress(Exception):  # closing a broken stream may fail again; nothing to keep
            await aclose()
