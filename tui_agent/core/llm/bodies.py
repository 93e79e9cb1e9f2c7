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

A proxy's or load balancer's HTML error page is named by its title, never shown as
markup. The search is bounded (a few parses, whatever the size of the text): it runs on
the event loop, once per failed attempt.

It also gives the real HTTP status where litellm reports another (an Anthropic 529
arrives as 500, a Gemini 503 as 500). :mod:`.errors` turns the result into words.
"""

from __future__ import annotations

import ast
import html
import json
import re
from dataclasses import dataclass
from typing import Any

_BYTES = re.compile(r"""b'(?:[^'\\]|\\.)*'|b"(?:[^"\\]|\\.)*\"""")
_WRAPPER = re.compile(r"^(?:litellm\.\w+(?:Error|Exception)\s*:\s*)+")
_HTML = re.compile(r"<!doctype html|<html[\s>]", re.I)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>|<h1[^>]*>(.*?)</h1>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")
_OPENING = re.compile(r"""\{\s*(["'])""")
ATTEMPTS = 32
"""How many places a body may start at are tried, at most (each a parse)."""
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
    return _page(text)


def _page(text: str) -> Said | None:
    """An HTML error page (a proxy's or load balancer's 502, say) in its own words: its
    title (else its first heading), never the markup and scripts."""
    if not _HTML.search(text):
        return None
    found = _TITLE.search(text)
    title = (found.group(1) or found.group(2)) if found else ""
    words = " ".join(html.unescape(_TAG.sub(" ", title)).split())
    return Said(f"an HTML error page: {words[:200]}" if words else "an HTML error page")


def _bodies(text: str) -> list[Any]:
    """The JSON objects in ``text``: inside bytes literals first, then bare."""
    found: list[Any] = []
    for literal in _BYTES.findall(text)[:ATTEMPTS]:
        try:
            raw = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        found.extend(_objects(raw.decode("utf-8", "replace")))
    found.extend(_objects(text))
    return found


def _objects(text: str) -> list[Any]:
    """The JSON objects in ``text``, else the Python dicts (the openai SDK's errors say
    ``Error code: 429 - {'error': {...}}``, the body as a dict's repr). Only a ``{`` that
    opens a key (``{"`` or ``{'``) is tried, each once, and at most :data:`ATTEMPTS` of
    them: an HTML error page full of script braces costs no more than a small body
    (classify runs on the event loop)."""
    decoder = json.JSONDecoder()
    out, end = [], 0
    for start in _openings(text, '"'):
        if start < end:
            continue  # inside an object already read
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out or _python_dicts(text)


def _openings(text: str, quotes: str) -> list[int]:
    """Where a dict with a key quoted by one of ``quotes`` may start: the first
    :data:`ATTEMPTS` of them."""
    return [m.start() for m in _OPENING.finditer(text)
            if m.group(1) in quotes][:ATTEMPTS]


def _python_dicts(text: str) -> list[Any]:
    """The first dict literal in ``text``: each ``{'``/``{"`` tried once, up to its
    matching ``}`` (one ``literal_eval`` each)."""
    for start in _openings(text, "'\""):
        end = _closing(text, start)
        if end is None:
            continue
        try:
            value = ast.literal_eval(text[start:end + 1])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return [value]
    return []


def _closing(text: str, start: int) -> int | None:
    """The index of the ``}`` that closes the ``{`` at ``start``, skipping quoted
    strings (with their backslash escapes); None when it is not closed."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return i if c == "}" else None
        i += 1
    return None


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
