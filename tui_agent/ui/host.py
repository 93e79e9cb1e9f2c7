"""What the app's collaborators (``turn.py``, ``listeners.py``) use of the app, as a
protocol: they are handed the app but do not import it (it imports them)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.timer import Timer, TimerCallback
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager

    from tui_agent.core.attachments import Attachment
    from tui_agent.ui.widgets.status import StatusBar
    from tui_agent.ui.widgets.transcript import Transcript
    from tui_agent.wiring.runtime import Runtime


class ChatHost(Protocol):
    """:class:`~tui_agent.ui.chat.ChatApp`, as its collaborators see it."""

    loaded: asyncio.Event
    backend: Runtime
    attachments: list[str]
    """Resources for the next message."""
    images: list[Attachment]
    """Images for the next message."""

    @property
    def chat(self) -> Screen[None]: ...

    @property
    def transcript(self) -> Transcript: ...

    @property
    def status(self) -> StatusBar: ...

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def workers(self) -> WorkerManager: ...

    def show_pending(self) -> None: ...

    def show_price(self) -> None: ...

    def hear_start(self) -> object:
        """Show what a new conversation's SessionStart hooks say, once done (a worker)."""
        ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def run_worker(self, work: Coroutine[Any, Any, None], name: str | None = "",
                   group: str = "default", description: str = "", exit_on_error: bool = True,
                   start: bool = True, exclusive: bool = False, thread: bool = False
                   ) -> Worker[None]: ...

    def set_timer(self, delay: float, callback: TimerCallback | None = None, *,
                  name: str | None = None, pause: bool = False) -> Timer: ...
