"""What the provider itself said when a request failed, read from the error body.

litellm puts the provider's body into the exception's message, and for some providers
as a Python bytes literal (``AnthropicError - b'{"type":"error",...}'``, the Gemini
ones too). :func:`said` finds that body, whatever its wrapping, and reads each
provider's own shape of it:

- Anthropic: ``{"type": "error", "error": {"type", "message"}}``
- Google: ``{"error": {"code", "message", "status"}}``
- OpenAI (and the OpenAI-compatible servers, LiteLLM Proxy among them):
  ``{"error": {"message", "type", "code"}}``
- Ollama: ``{"error": "..."}``

It also gives the real HTTP status where litellm reports another (an Anthropic 529
arrives as 500, a Gemini 503 as 500). :mod:`.errors` turns the result into words.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

_BYTES = re.compile(r"""b'(?:[^'\\]|\\.)*'|b"(?:[^"\\]|\\.)*\"""")
_WRAPPER = re.compile(r"^(?:litellm\.\w+(?:Error|Exception)\s*:\s*)+")
_STATUS_OF_TYPE = {"overloaded_error": 529}
"""Anthropic error types whose status litellm loses (it reports a 529 as 500)."""


@dataclass(frozen=True)
class Said:
    """The provider's own account of a failure."""

    message: str
    type: str | None = None
    """The provider's error type or status word (``overloaded_error``, ``UNAVAILABLE``,
    ``context_length_exceeded``, ``budget_exceeded``)."""
    status: int | None = None
    """The status the provider meant, when the body says (Google's ``code``, Anthropic's
    529 for ``overloaded_error``)."""
    code: str | None = None
    """OpenAI's ``code`` field, when it differs from the type."""


def said(text: str) -> Said | None:
    """The provider's error, read from the body inside ``text`` (an exception's message);
    None when ``text`` holds no body this module knows."""
    for body in _bodies(text):
        found = _read(body)
        if found is not None:
            return found
    return None


def _bodies(text: str) -> list[Any]:
    """The JSON objects in ``text``: inside bytes literals first, then bare."""
    found: list[Any] = []
    for literal in _BYTES.findall(text):
        try:
            raw = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        found.extend(_objects(raw.decode("utf-8", "replace")))
    found.extend(_objects(text))
    return found


def _objects(text: str) -> list[Any]:
    """The JSON objects in ``text``, else the Python dicts (the openai SDK's errors say
    ``Error code: 429 - {'error': {...}}``, the body as a dict's repr)."""
    decoder = json.JSONDecoder()
    out = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            out.append(value)
        start = text.find("{", end)
    return out or _python_dicts(text)


def _python_dicts(text: str) -> list[Any]:
    """The first dict literal in ``text``: from its first ``{`` to the last ``}`` that
    closes a literal (short texts only: each try parses)."""
    if len(text) > 20_000:
        return []
    start = text.find("{")
    ends = [i for i, c in enumerate(text) if c == "}"]
    while start != -1:
        for end in reversed([e for e in ends if e > start]):
            try:
                value = ast.literal_eval(text[start:end + 1])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict):
                return [value]
        start = text.find("{", start + 1)
    return []


def _read(body: dict[str, Any]) -> Said | None:
    error = body.get("error")
    if isinstance(error, str) and error.strip():  # Ollama, and plain servers
        return Said(error.strip())
    if not isinstance(error, dict):
        return None
    message = _unwrapped(str(error.get("message") or ""))
    if not message:
        return None
    kind = error.get("type") or error.get("status")
    code = error.get("code")
    status = _status(code) or _STATUS_OF_TYPE.get(str(kind))
    text_code = str(code) if code is not None and _status(code) is None else None
    return Said(message, str(kind) if kind else None, status, text_code)


def _unwrapped(message: str) -> str:
    """A message without the exception names a LiteLLM Proxy puts before it
    ("litellm.RateLimitError: ...") and without what it adds after a blank line."""
    first = message.strip().split("\n\n")[0].strip()
    return _WRAPPER.sub("", first) or first


def _status(code: object) -> int | None:
    """An HTTP status in a ``code`` field (Google's int, LiteLLM Proxy's "429")."""
    try:
        value = int(str(code))
    except ValueError:
        return None
    return value if 400 <= value <= 599 else None
