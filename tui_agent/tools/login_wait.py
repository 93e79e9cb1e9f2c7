"""A server's starts as its login shapes them. A start that fails for a login (nobody could
be shown the login page, the authorization server refused or could not be reached) is not
the server failing: it does not count on the circuit breaker (no "open", no trip), and it
is not retried on a backoff by itself, since each try would end the same way. The server
waits, ``failed`` with why, until a person acts (``l`` in the app, ``r``, or ``tui-agent
login`` elsewhere then ``r``); once it connects, that old error goes.

:class:`LoginAware` sits between :class:`~tui_agent.tools.lifecycle.ServerLifecycle` and
the call path (:class:`~tui_agent.tools.call_path.CallPath`); its
:meth:`~LoginAware.next_start` tells a front end how the start it asked for ended, and a
call's timer waits for a person logging in mid-call (a step-up).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from tui_agent.tools.auth.callback import LoginError
from tui_agent.tools.client import PERSON_POLL
from tui_agent.tools.errors import LOGIN_STEP, innermost
from tui_agent.tools.lifecycle import ServerLifecycle, State

STOPPED = "the server was stopped before it connected"
"""How a start asked for ended when the server was closed or disabled first."""
LOOK_AHEAD = 0.25
"""Seconds before a call's deadline at which a person logging in is looked for."""


def login_failure(exc: BaseException) -> bool:
    """``exc`` ended a start at its login: a :class:`LoginError`, or a request of a login
    step that did not get through (an authorization server that is down)."""
    leaf = innermost(exc)
    extensions = getattr(getattr(leaf, "_request", None), "extensions", None)
    return isinstance(leaf, LoginError) or isinstance(extensions, dict) and LOGIN_STEP in extensions


class LoginAware(ServerLifecycle):
    """A server's lifecycle whose login failures wait for a person (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.login_failed = False
        """The last start ended at its login."""
        self._login_error = False  # last_error is a login's, to clear once connected
        self._start_waiters: list[asyncio.Future[str | None]] = []

    def next_start(self) -> asyncio.Future[str | None]:
        """Settles when the next start ends: None when it connected, else why it failed
        (:data:`STOPPED` when the server was closed or disabled first)."""
        waiter: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        if self._stopping:
            waiter.set_result(STOPPED)
        else:
            self._start_waiters.append(waiter)
        return waiter

    async def close(self) -> None:
        try:
            await super().close()
        finally:  # no start will end now: whoever waits for one is told so
            self._tell_start(STOPPED)

    def _tell_start(self, outcome: str | None) -> None:
        waiters, self._start_waiters = self._start_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(outcome)

    async def _connect(self, stack: AsyncExitStack) -> Any:
        self.login_failed = False
        try:
            return await super()._connect(stack)
        except Exception as exc:
            self.login_failed = login_failure(exc)
            raise

    async def _fetch_tools(self, client: Any) -> None:
        try:  # a server may ask for its login at the first listing, not at initialize
            await super()._fetch_tools(client)
        except Exception as exc:
            if self._client is None:  # starting (a refresh while serving is not a start)
                self.login_failed = self.login_failed or login_failure(exc)
            raise

    def _failed(self, message: str) -> None:
        if not self.login_failed:
            super()._failed(message)
        elif not self._stopping:  # no breaker: the server did not fail, a login is due
            self._login_error = True
            self._set("failed", message)
        if not self._stopping:
            self._tell_start(self.last_error)

    async def _attempt(self) -> bool:
        # What woke the owner (a lazy server's demand, l, r) is answered by this attempt; left
        # set, it would end the wait below at once, and a failed login would go again.
        self._wake.clear()
        if self._stopping:
            return False
        connected = await super()._attempt()
        if self.login_failed and not self._stopping:
            self._settled.set()  # the start is over, as far as anyone waiting on it goes
            await self._wake.wait()  # reconnect (l, r) or close
            return True  # what was asked for goes at once (the backoff starts afresh)
        return connected

    def _wait_for_person(self, scope: Any) -> Callable[[], None]:
        """While a person logs in mid-call (a step-up), the call's timer waits for them (the
        login has a time limit of its own); returns what stops the watch."""
        loop = asyncio.get_running_loop()  # its clock is anyio's on asyncio
        timer: list[asyncio.TimerHandle] = []

        def next_look() -> asyncio.TimerHandle:
            # Just before the deadline, so the look always runs before the scope's own
            # timer (a loop running late runs both in order); a moved deadline moves it.
            when = scope.deadline - LOOK_AHEAD
            return loop.call_at(when if when > loop.time() else loop.time() + PERSON_POLL,
                                look)

        def look() -> None:
            if self.side.person_busy():
                scope.deadline = max(scope.deadline, loop.time() + self.call_timeout)
            timer[0] = next_look()

        timer.append(next_look())
        return lambda: timer[0].cancel()

    def _set(self, state: State, error: str | None = None) -> None:
        if state == "connected":
            if self._login_error:
                self.last_error, self._login_error = None, False
            self._tell_start(None)
        super()._set(state, error)
