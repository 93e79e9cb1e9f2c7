"""How a server's failures are told: :class:`ServerError` for a call that could not be
made or finished, the MCP error codes we act on, and one line for any failure
(:func:`describe_error`), however deep the SDK nested it."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from tui_agent.config.urls import mask_url
from tui_agent.tools.text import clean

CONNECTION_CLOSED, REQUEST_TIMEOUT, METHOD_NOT_FOUND = -32000, -32001, -32601
URL_ELICITATION_REQUIRED = -32042
MISSING_CAPABILITY = -32021
"""Missing Required Client Capability (2026-07-28): ``error.data.requiredCapabilities``."""
LOGIN_STEP = "tui_agent.login_step"
"""The extension of an ``httpx`` request that names the login step it was sent for."""
UNANSWERED = "tui_agent.unanswered"
"""The extension of a login step's request that keeps the error it got instead of an
answer (an authorization server that is down)."""


class ServerError(Exception):
    """A call that could not be made or finished; the message names the server.
    ``timeout``: the call was cancelled for taking too long."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class Dropped(Exception):
    """The connection went away during a call (a retry-safe call may be tried again)."""


class LinksFirst(Exception):
    """The server answered a call with -32042: links to open before it can run (``error``
    is the SDK's ErrorData, carrying them)."""

    def __init__(self, error: object) -> None:
        super().__init__("URL elicitation required")
        self.error = error


def describe_error(exc: BaseException) -> str:
    """One line for a failure, from the innermost real exception of any group."""
    leaf = innermost(exc)
    code = getattr(leaf, "code", None)
    message = getattr(leaf, "message", None) or str(leaf) or type(leaf).__name__
    if getattr(leaf, "plain", False):  # already a sentence for the user
        return str(leaf)
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename or message}"
    if isinstance(code, int):
        message = re.sub(rf"^MCP error {code}:\s*", "", message)
        return f"{message} (MCP error {code})"
    name = type(leaf).__name__
    request = getattr(leaf, "_request", None)  # an httpx request error: say what it asked
    if request is not None and hasattr(request, "extensions"):
        step = request.extensions.get(LOGIN_STEP)
        url = mask_url(str(request.url))  # the URL's credentials are no part of the why
        what = f"{step} at {url}" if isinstance(step, str) else url
        return f"could not reach {what} ({name}: {message})"
    return message if name in message else f"{name}: {message}"


def innermost(exc: BaseException) -> BaseException:
    """The first real exception inside any nesting of exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        real = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (real or list(exc.exceptions))[0]
    return exc


def first_clause(error: str | None) -> str:
    """An error without an earlier "; next try in ..." suffix."""
    return (error or "failing").split("; next try in")[0]


def misfit(exc: Any) -> str:
    """A pydantic ``ValidationError`` from the SDK's check of a server's result, in one
    line a person reads: where in the result and what was wrong (the first few), the
    server's values left out (they can be big, and are untrusted)."""
    parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or 'the result'}: {e.get('msg')}"
             for e in exc.errors(include_url=False, include_input=False)[:3]]
    return clean("; ".join(parts))
