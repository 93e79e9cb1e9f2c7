"""How an LLM request failed, in words that say what to do: :class:`LLMError` and
:func:`classify`, which reads litellm's exceptions (the module is handed in: only
:mod:`tui_agent.core.llm.loader` imports litellm)."""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from tui_agent.config.models import ModelSettings


class LLMError(Exception):
    """An LLM request failed. ``kind`` is one of: ``no_model``, ``unknown_model``,
    ``no_api_key``, ``auth``, ``unreachable``, ``rate_limit``, ``server``,
    ``timeout``, ``context_window``, ``bad_request``, ``stream_cut``."""

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


def classify(litellm: ModuleType, exc: BaseException, settings: ModelSettings) -> LLMError:
    """Turn a litellm/openai exception into an :class:`LLMError` that says what to do."""
    if isinstance(exc, LLMError):
        return exc
    ex = litellm.exceptions
    # "litellm.RateLimitError: RateLimitError: OpenAIException - the message" -> the message
    text = re.sub(r"^(?:[\w.]+(?:Error|Exception)\s*[:-]\s*)+", "",
                  str(exc).split("\n")[0].strip()) or type(exc).__name__
    where = settings.api_base or "the provider"
    status = getattr(exc, "status_code", None)
    if isinstance(exc, ex.ContextWindowExceededError):
        return LLMError("context_window", f"the conversation is too long for {settings.name}: "
                        f"{text.rstrip('.')}. Start a new conversation or use a model with a "
                        "larger context.")
    if isinstance(exc, ex.AuthenticationError | ex.PermissionDeniedError):
        return LLMError("auth", f"{where} refused the API key for {settings.name}: {text}. "
                        "Give it the key with [model] api_key_env = \"VAR\" (the variable "
                        "that holds it) or api_key")
    if isinstance(exc, ex.NotFoundError):
        return LLMError("unknown_model", f"{where} does not know the model "
                        f"'{settings.name}': {text}")
    if isinstance(exc, ex.RateLimitError):
        return LLMError("rate_limit", f"rate limited by {where} (429)", retriable=True,
                        retry_after=_retry_after(exc))
    if isinstance(exc, ex.Timeout):
        return LLMError("timeout", f"{where} did not answer within {settings.timeout:g} s",
                        retriable=True)
    if _is_connection_error(ex, exc):
        return LLMError("unreachable", f"cannot reach {where}: {text}", retriable=True)
    if isinstance(exc, ex.BadRequestError):
        return LLMError("bad_request", f"{where} rejected the request: {text}")
    if isinstance(status, int) and status >= 500 or isinstance(
            exc, ex.InternalServerError | ex.ServiceUnavailableError | ex.BadGatewayError):
        return LLMError("server", f"{where} failed ({status or 'server error'}): {text}",
                        retriable=True, retry_after=_retry_after(exc))
    return LLMError("server", f"the request to {where} failed: {type(exc).__name__}: {text}")


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
