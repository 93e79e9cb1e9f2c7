"""The chat's ways out: the quit key, ``/quit``, SIGINT, SIGTERM, SIGHUP, a terminal that
went away, and any other end of the app (an error Textual ended it with, a pilot test that
left on a failure) all close the session and every server; :mod:`tui_agent.ui.exits`
holds the helpers (the hardened driver, the writer, the emergency exit)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING

from textual.app import App

from tui_agent.ui import exits

if TYPE_CHECKING:
    from tui_agent.wiring.runtime import Runtime

STOP_GRACE = 3.0
"""Seconds a cancelled turn gets to record itself before the session is closed anyway."""


class WaysOut(App[int]):
    """The ways out of :class:`~tui_agent.ui.chat.ChatApp` (its state, as it sets it)."""

    backend: Runtime
    loaded: asyncio.Event
    _shutting_down: bool
    _signals_seen: int
    _hung_up: bool

    def action_stop(self) -> None:
        """Stop the turn in flight (the chat's turns do)."""

    async def action_quit(self) -> None:
        await self.shut_down(0)

    async def shut_down(self, code: int) -> None:
        """The one way out (the quit key, ``/quit``, SIGINT, SIGTERM, SIGHUP): the turn in
        flight is cancelled and recorded as such, the session is closed, every server and
        container is closed at once (a few seconds, then killed), and the terminal is
        restored."""
        if self._shutting_down:
            return
        self._shutting_down = True
        await self.before_shutdown()
        turns = [w for w in self.workers if w.group == "turn" and w.is_running]
        self.action_stop()
        if turns:  # let the cancelled turn write its incomplete reply before the file closes
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STOP_GRACE):
                    for worker in turns:
                        with contextlib.suppress(Exception):  # cancelled, as asked
                            await worker.wait()
        if self.loaded.is_set():
            await self.backend.close()
        self.exit(code, return_code=code)

    async def before_shutdown(self) -> None:
        """What a subclass must settle before the turn is stopped and the servers close."""

    async def on_unmount(self) -> None:
        """Any other way out (an error Textual caught and ended the app with, a test whose
        pilot left on a failed assertion) closes every server and container too, as the
        quit key does: a stdio server ran on until this process ended and its pipe with it
        (a failed pilot test left its MCP server running), a container until Docker saw."""
        if not self._shutting_down and self.loaded.is_set():
            self._shutting_down = True
            await self.backend.close()

    def _on_signal(self, signum: int) -> None:
        """First signal: shut down as the quit key does. A second: leave at once (every
        message is already on disk, so the session still loads). A SIGHUP after the
        terminal was found gone is the same news twice, not a second signal."""
        if signum == signal.SIGHUP and self._hung_up:
            return
        self._hung_up = exits.hung_up(signum) or self._hung_up
        self._signals_seen += 1
        if self._signals_seen == 1:
            self.run_worker(self.shut_down(128 + signum), group="shutdown")
            return
        exits.emergency_exit(128 + signum)

    def _terminal_gone(self) -> None:
        """The terminal went away: end as SIGHUP does (once, whichever noticed first). A
        shutdown already under way (the quit key) is hurried: nobody waits for it now."""
        exits.hung_up(signal.SIGHUP)
        if not self._hung_up and not self._shutting_down:
            self._on_signal(signal.SIGHUP)
        self._hung_up = True

    def _watch_terminal(self) -> None:
        if not self._hung_up and exits.terminal_gone():
            self._terminal_gone()

    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in exits.SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._on_signal, sig)
        exits.SafeWriter.on_gone = lambda: loop.call_soon_threadsafe(self._terminal_gone)
        self.set_interval(exits.POLL_EVERY, self._watch_terminal)
