"""The TUI's answer to the core's :class:`~tui_agent.core.approval.Gate`: the modal; and
to a server that asks the person for something (:class:`ModalAsker`).

Calls are asked one at a time, in the order they arrive (a lock queues the
rest), so several calls from one reply, or from a script, never stack modals.
A turn cancelled while its modal is up takes the modal down with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import Screen

from tui_agent.core.approval import Decision, PendingCall
from tui_agent.tools.elicit import Answer, Form, UrlAsk
from tui_agent.tools.sampling import SampleRequest


class ModalGate:
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
            answer: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

            def deliver(decision: Decision | None) -> None:
                if not answer.done():
                    answer.set_result(decision or Decision.deny())

            screen = ApprovalScreen(call, remember_in=self.remember_in(call.server))
            await self.app.push_screen(screen, callback=deliver)
            try:
                return await answer
            except asyncio.CancelledError:
                if screen.is_active or screen in self.app.screen_stack:
                    screen.dismiss(Decision.deny("cancelled"))
                raise


class ModalAsker:
    """The TUI's answer to a server that asks the person (MCP elicitation): a modal, one
    at a time; a request cancelled meanwhile (its call was) takes its modal down."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._lock = asyncio.Lock()

    async def __call__(self, request: Form | UrlAsk) -> Answer:
        from tui_agent.ui.screens.elicit import ElicitScreen, UrlConsent

        async with self._lock:
            answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

            def deliver(given: Answer | None) -> None:
                if not answer.done():
                    answer.set_result(given or Answer("cancel"))

            screen = UrlConsent(request) if isinstance(request, UrlAsk) else \
                ElicitScreen(request)
            await self.app.push_screen(screen, callback=deliver)
            try:
                return await answer
            except asyncio.CancelledError:
                if screen.is_active or screen in self.app.screen_stack:
                    screen.dismiss(Answer("cancel"))
                raise


class ModalSampler:
    """The TUI's look at a server's request for the model, and at the reply, each a modal
    (one at a time)."""

    def __init__(self, app: App[Any], model: Callable[[], str | None]) -> None:
        self.app, self.model = app, model
        self._lock = asyncio.Lock()

    async def review(self, request: SampleRequest) -> SampleRequest | None:
        from tui_agent.ui.screens.sampling import SamplingScreen

        chosen = await self._modal(SamplingScreen(request, self.model()), None)
        return chosen if isinstance(chosen, SampleRequest) else None

    async def confirm(self, request: SampleRequest, reply: str) -> bool:
        from tui_agent.ui.screens.sampling import SampledReply

        return bool(await self._modal(SampledReply(request, reply), False))

    async def _modal(self, screen: Screen[Any], cancelled: Any) -> Any:
        async with self._lock:
            answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def deliver(given: Any) -> None:
                if not answer.done():
                    answer.set_result(given)

            await self.app.push_screen(screen, callback=deliver)
            try:
                return await answer
            except asyncio.CancelledError:
                if screen.is_active or screen in self.app.screen_stack:
                    screen.dismiss(cancelled)
                raise
