"""The TUI's answer to the core's :class:`~tui_agent.core.permissions.Gate`: the modal; and
to a server that asks the person for something (:class:`ModalAsker`).

Calls are asked one at a time, in the order they arrive (a lock queues the
rest), so several calls from one reply, or from a script, never stack modals.
A turn cancelled while its modal is up takes the modal down with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from textual.app import App
from textual.screen import Screen

from tui_agent.core.permissions import Decision, PendingCall
from tui_agent.tools.elicit import Answer, Form, UrlAsk
from tui_agent.tools.sampling import SampleRequest

T = TypeVar("T")


class ModalGate:
    asks_person = True

    def __init__(self, app: App[Any], *, remember_in: Callable[[str], str | None],
                 on_waiting: Callable[[PendingCall], None]) -> None:
        self.app = app
        self.remember_in = remember_in
        self.on_waiting = on_waiting
        self._lock = asyncio.Lock()

    async def decide(self, call: PendingCall) -> Decision:
        from tui_agent.ui.screens.approval import ApprovalScreen

        async with self._lock:
            self.on_waiting(call)
            screen = ApprovalScreen(call, remember_in=self.remember_in(call.server))
            return await modal_answer(self.app, screen, absent=Decision.deny(),
                                      cancelled=Decision.deny("cancelled"))


class ModalAsker:
    """The TUI's answer to a server that asks the person (MCP elicitation): a modal, one
    at a time; a request cancelled meanwhile (its call was) takes its modal down."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._lock = asyncio.Lock()

    async def __call__(self, request: Form | UrlAsk) -> Answer:
        from tui_agent.ui.screens.elicit import ElicitScreen, UrlConsent

        async with self._lock:
            screen: Screen[Answer] = UrlConsent(request) if isinstance(request, UrlAsk) \
                else ElicitScreen(request)
            return await modal_answer(self.app, screen, absent=Answer("cancel"),
                                      cancelled=Answer("cancel"))


class ModalSampler:
    """The TUI's look at a server's request for the model, and at the reply, each a modal
    (one at a time)."""

    def __init__(self, app: App[Any], model: Callable[[], str | None]) -> None:
        self.app, self.model = app, model
        self._lock = asyncio.Lock()

    async def review(self, request: SampleRequest) -> SampleRequest | None:
        from tui_agent.ui.screens.sampling import SamplingScreen

        async with self._lock:
            return await modal_answer(self.app, SamplingScreen(request, self.model()),
                                      absent=None, cancelled=None)

    async def confirm(self, request: SampleRequest, reply: str) -> bool:
        from tui_agent.ui.screens.sampling import SampledReply

        async with self._lock:
            return await modal_answer(self.app, SampledReply(request, reply), absent=False,
                                      cancelled=False)


async def modal_answer(app: App[Any], screen: Screen[Any], *, absent: T, cancelled: T) -> T:
    """Push ``screen`` and wait for what it is dismissed with (``absent`` if nothing). A
    wait cancelled meanwhile (its turn or call was) takes the modal down with
    ``cancelled``."""
    answer: asyncio.Future[T] = asyncio.get_running_loop().create_future()

    def deliver(given: T | None) -> None:
        if not answer.done():
            answer.set_result(given if given is not None else absent)

    await app.push_screen(screen, callback=deliver)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_active or screen in app.screen_stack:
            screen.dismiss(cancelled)
        raise
