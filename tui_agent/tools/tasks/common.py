"""What both forms of tasks share: how often a task is looked at, which statuses end
it, and how its words and its end are told (cleaned, capped)."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from tui_agent.tools.news import News
from tui_agent.tools.text import clean

DEFAULT_POLL = 1.0
"""Seconds between looks when the server suggests no poll interval."""
MIN_POLL = 0.05
"""A server that asks for 0 ms is not polled in a busy loop."""
MAX_POLL = 30.0
"""A server that asks for an hour still has its task looked at (and its cancel noticed)
twice a minute."""
CANCEL_WAIT = 5.0
"""Seconds ``tasks/cancel`` may take on the way out of a cancelled call."""
TERMINAL = frozenset({"completed", "failed", "cancelled"})
MAX_MESSAGE = 500
MAX_ID = 200


def clamped(ms: float | None) -> float:
    """Seconds until the next look for a server's interval of ``ms``, within bounds."""
    return DEFAULT_POLL if ms is None else min(max(ms / 1000, MIN_POLL), MAX_POLL)


def said(message: str | None) -> str | None:
    """A server's status message as it may be shown: cleaned and capped."""
    return clean(message)[:MAX_MESSAGE] if message else None


def shown_id(task_id: str) -> str:
    return clean(task_id)[:MAX_ID]


def ended(tool: str, task_id: str, status: str, message: str | None) -> str:
    """The words of a task that failed or that the server cancelled."""
    how = "was cancelled by the server" if status == "cancelled" else "failed"
    why = f": {message}" if message else ""
    return f"{tool} (task {shown_id(task_id)}) {how}{why}"


def status_of(task: Any) -> tuple[str, str | None]:
    """``(status, message)`` of a task as news compares and tells them."""
    return str(task.status), said(task.status_message)


@dataclass(frozen=True)
class TaskCall:
    """What the call path knows of the call whose answer became a task: the server's
    name (for the words of a failure), ``alive`` (told at each answer of the server: the
    call's timer starts again), whom to tell the task's news, and ``waiting`` (told before
    each wait between two looks, of its seconds: a poll interval longer than the server's
    per-call ``timeout`` must not run the call out of time before the next look)."""

    server: str
    alive: Callable[[], None]
    news: News | None
    waiting: Callable[[float], None] = lambda seconds: None


TASK_CALL: ContextVar[TaskCall | None] = ContextVar("tui_agent_task_call", default=None)
"""The call in flight in this context; the SDK hands a task to the extension with no way
to pass it along."""
