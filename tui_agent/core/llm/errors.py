"""How an LLM request failed, in words that say what to do: :class:`LLMError` and
:func:`classify`, which reads litellm's exceptions (the module is handed in: only
:mod:`tui_agent.core.llm.loader` imports litellm) together with the provider's own
account of the failure, which :mod:`.bodies` reads from the error body."""

from __future__ import annotations

import os
import re
from types import ModuleType
from typing import Any

from tui_agent.config.models import ModelSettings
from tui_agent.config.urls import mask_url
from tui_agent.core.llm.bodies import Said, said
from tui_agent.core.llm.proxy import is_gateway
from tui_agent.tools.text import clean


class LLMError(Exception):
    """An LLM request failed. ``kind`` is one of: ``no_model``, ``unknown_model``,
    ``no_api_key``, ``auth``, ``unreachable``, ``rate_limit``, ``overloaded``,
    ``budget``, ``server``, ``timeout``, ``context_window``, ``bad_request``,
    ``stream_cut``."""

    CONFIG_KINDS = frozenset({"no_model", "unknown_model", "no_api_key"})

    def __init__(self, kind: str, message: str, *, retriable: bool = False,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retriable = retriable
        self.retry_after = retry_after

    @property
    def is_config(self) -> bool:
        return self.kind in self.CONFIG_KINDS


_CONTEXT = re.compile(
    r"context_length_exceeded|exceed_context_size|prompt is too long|input is too long|"
    r"maximum context length|exceeds the (?:available )?context (?:length|size)|"
    r"input token count .* exceeds the maximum number of tokens", re.I)
"""Each provider's wording for a request too long for the model: OpenAI's code and
sentence, Anthropic's "prompt is too long: N tokens > M maximum", Gemini's "The input
token count (N) exceeds the maximum number of tokens allowed (M)", Ollama's "the input
length exceeds the context length", llama.cpp's ``exceed_context_size_error``."""
_LIMIT = re.compile(
    r"tokens? > (\d[\d,]*) maximum|maximum number of tokens allowed(?: is)? \(?(\d[\d,]*)|"
    r"maximum context length is (\d[\d,]*)|available context size \((\d[\d,]*)", re.I)
_BUDGET = re.compile(r"budget[_ ](?:has been )?exceeded|exceeded (?:your |the )?budget|"
                     r"insufficient_quota|exceeded your current quota", re.I)
"""A LiteLLM Proxy's budget refusals ("Budget has been exceeded", a deployment's "crossed
budget: Exceeded budget"), and OpenAI's ``insufficient_quota`` 429, "You exceeded your
current quota" (billing, which no retry fixes; litellm keeps only the sentence)."""
_URL = re.compile(r"\bhttps?://\S+", re.I)
"""A link in the provider's words (its docs' anchors name limits too): not matched."""
_OVERLOADED = frozenset({"overloaded_error", "UNAVAILABLE"})


def classify(litellm: ModuleType, exc: BaseException, settings: ModelSettings) -> LLMError:
    """Turn a litellm/openai exception into an :class:`LLMError` that says what to do."""
    if isinstance(exc, LLMError):
        return exc
    ex = litellm.exceptions
    original = getattr(exc, "original_exception", None)
    if isinstance(exc, ex.MidStreamFallbackError) and isinstance(original, BaseException):
        exc = original  # Gemini's failures before the first chunk come wrapped in this
    where = _where(settings, exc)
    refused = unreachable(exc)
    if refused is not None:  # litellm reports a dead port as a 500: there was no status
        return LLMError("unreachable", f"cannot reach {where}: {refused}", retriable=True)
    body = said(str(exc))
    # The provider's words are untrusted: no escape sequence reaches a terminal from here.
    text = clean(body.message if body is not None else _plain(exc))
    status = (body.status if body is not None else None) or getattr(exc, "status_code", None)
    code = f" ({status})" if isinstance(status, int) else ""
    words = " ".join(filter(None, (text, body.type, body.code))) if body else text
    words = _URL.sub("", words)
    if isinstance(exc, ex.ContextWindowExceededError) or _CONTEXT.search(words):
        return _too_long(settings, text)
    if _BUDGET.search(words):
        return LLMError("budget", f"{where} refused the request{code}: the budget is spent "
                        f"({text}). Ask whoever runs it for more budget or another key.")
    if isinstance(exc, ex.AuthenticationError | ex.PermissionDeniedError):
        return LLMError("auth", f"{where} refused the API key for {settings.name}{code}: "
                        f"{text}. "
                        "Give it the key with [model] api_key_env = \"VAR\" (the variable "
                        "that holds it) or api_key")
    if isinstance(exc, ex.NotFoundError):
        return LLMError("unknown_model", f"{where} does not know the model "
                        f"'{settings.name}'{code}: {text}")
    if status == 429 or isinstance(exc, ex.RateLimitError):
        return LLMError("rate_limit", f"rate limited by {where} (429): {text}", retriable=True,
                        retry_after=_retry_after(exc))
    if _overloaded(body, status):
        return LLMError("overloaded", f"{where} is overloaded{code}: "
                        f"{text}", retriable=True, retry_after=_retry_after(exc))
    if isinstance(exc, ex.Timeout):
        return LLMError("timeout", f"{where} did not answer within {settings.timeout:g} s",
                        retriable=True)
    if _is_connection_error(ex, exc):
        return LLMError("unreachable", f"cannot reach {where}: {text}", retriable=True)
    if isinstance(exc, ex.BadRequestError):
        return LLMError("bad_request", f"{where} rejected the request{code}: {text}")
    if isinstance(status, int) and status >= 500 or isinstance(
            exc, ex.InternalServerError | ex.ServiceUnavailableError | ex.BadGatewayError):
        return LLMError("server", f"{where} failed{code or ' (server error)'}: {text}",
                        retriable=True, retry_after=_retry_after(exc))
    return LLMError("server", f"the request to {where} failed{code}: "
                    f"{type(exc).__name__}: {text}")


def _too_long(settings: ModelSettings, text: str) -> LLMError:
    found = _LIMIT.search(text)
    limit = next((g for g in found.groups() if g), None) if found else None
    window = (f" Its context window is {int(limit.replace(',', '')):,} tokens."
              if limit else "")
    return LLMError("context_window", f"the conversation is too long for {settings.name}: "
                    f"{text.rstrip('.')}.{window} Start a new conversation or use a model "
                    "with a larger context.")


def _overloaded(body: Said | None, status: object) -> bool:
    """Anthropic's 529 ``overloaded_error``, Gemini's 503 ``UNAVAILABLE``."""
    return status == 529 or body is not None and body.type in _OVERLOADED


_ADVICE = re.compile(r"\.?\s*Handle with `litellm\.\w+`\.?")
"""The advice litellm appends to some messages, meant for programmers using litellm."""
_REPR = re.compile(r"\s*(?:ssl:)?<[\w.]+ object at 0x[0-9a-fA-F]+>")
"""A Python object's repr inside a message (aiohttp's ``ssl:<ssl.SSLContext object ...>``)."""


def _plain(exc: BaseException) -> str:
    """The message of an exception whose body is no JSON: litellm's wrapping, its advice
    to programmers and any Python object's repr taken off."""
    text = str(exc).split("\n")[0].split(" Original exception:")[0].strip()
    # "litellm.RateLimitError: RateLimitError: OpenAIException - the message" -> the message
    text = re.sub(r"^(?:[\w.]+(?:Error|Exception)\s*[:-]\s*)+", "", text)
    text = _REPR.sub("", _ADVICE.sub("", text)).strip()
    return text or type(exc).__name__


_CONNECT_ERRORS = frozenset({"ConnectError", "ClientConnectorError", "ClientConnectorDNSError",
                             "ClientConnectorSSLError", "ClientConnectorCertificateError",
                             "ClientProxyConnectionError"})
"""httpx's and aiohttp's "could not connect" exceptions (by name: only the loader imports
litellm, and its HTTP clients are its business)."""


def unreachable(exc: BaseException) -> str | None:
    """The OS's words for why the connection could not be made ("connection refused",
    "name or service not known"), when ``exc`` was caused by one; else None. litellm wraps
    the connect error of Anthropic, Gemini and Ollama in a made-up 500 whose message holds
    aiohttp's text (with an SSL context's repr): the chain of causes still has the
    ``OSError`` with its errno."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    at = next((i for i, c in enumerate(chain) if type(c).__name__ in _CONNECT_ERRORS), None)
    if at is None:
        return None
    for link in chain[at:]:
        error = link if isinstance(link, OSError) else getattr(link, "os_error", None)
        if isinstance(error, OSError) and (error.errno or error.strerror):
            if isinstance(error.errno, int) and error.errno > 0:
                return os.strerror(error.errno).lower()
            return clean(str(error.strerror)).lower()
    return _plain(chain[at]) or "the connection failed"


def _where(settings: ModelSettings, exc: BaseException | None = None) -> str:
    """Who failed: the provider, and the address when one is configured ("anthropic at
    http://127.0.0.1:8080"), or the LiteLLM gateway. The address is printed as every URL
    is (:func:`~tui_agent.config.urls.mask_url`): its password and query values hidden."""
    at = f" at {mask_url(settings.api_base)}" if settings.api_base else ""
    if is_gateway(settings):
        return f"the LiteLLM gateway{at}"
    return f"{_provider(settings, exc)}{at}"


def _provider(settings: ModelSettings, exc: BaseException | None) -> str:
    name = settings.name or ""
    if "/" in name:
        return name.split("/", 1)[0]
    return str(getattr(exc, "llm_provider", "") or "the provider")


def _is_connection_error(ex: Any, exc: BaseException) -> bool:
    if isinstance(exc, ex.APIConnectionError):
        return True
    # openai's "Connection error." arrives as a 500 InternalServerError through litellm.
    return isinstance(exc, ex.InternalServerError) and "connection error" in str(exc).lower()


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(exc, "litellm_response_headers", None) or getattr(
        getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(str(value))) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
