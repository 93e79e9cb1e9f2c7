"""What a server tells while it works: progress of a call, and its log lines
(``notifications/progress``, ``notifications/message``). A caller that wants a call's news
sets :data:`CALL_NEWS` around the call; the connection hands it each progress report of
that call, each change of its task's status when it runs as a task, and each warning or
worse the server logs while the call runs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from tui_agent.tools.text import clean

SEVERE = frozenset({"warning", "error", "critical", "alert", "emergency"})
"""Log levels also shown on the card of a call in flight."""
MAX_LOG_TEXT = 2_000


@dataclass(frozen=True)
class Progress:
    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True)
class LogLine:
    server: str
    level: str
    text: str
    logger: str | None = None
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class TaskNews:
    """Where a call that runs as a task stands (MCP 2025-11-25 tasks): the server's task
    id, its status (``working``, ``input_required``, ``completed``, ``failed``,
    ``cancelled``) and what the server says of it, cleaned."""

    task_id: str
    status: str
    message: str | None = None


News = Callable[[Progress | LogLine | TaskNews], None]
CALL_NEWS: ContextVar[News | None] = ContextVar("tui_agent_call_news", default=None)
"""The news listener of the call being made in this context, if any."""


def log_line(server: str, params: Any) -> LogLine:
    """A server's ``notifications/message`` as one cleaned, capped line."""
    data = getattr(params, "data", None)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False,
                                                         default=str)
    logger = getattr(params, "logger", None)
    return LogLine(server, str(getattr(params, "level", "info")),
                   clean(text)[:MAX_LOG_TEXT], clean(logger) if logger else None)


def progress_of(progress: float, total: float | None, message: str | None) -> Progress:
    return Progress(progress, total, clean(message)[:500] if message else None)
