"""How many scripts run at once in this process, and how much memory they may take
together: ``[code_mode] max_scripts`` and ``max_total_memory_mb``.

Each running script holds its own ``max_memory_mb`` (the cap its child runs under) from
the moment its child starts until it is reaped. A script that does not fit waits, up to
its own ``timeout``, for one to finish; then it fails with a sentence naming the limit.
Agents in more than one event loop (tests, a second chat) share the one budget, so
waiters are woken across loops.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from tui_agent.config.models import CodeModeSettings


class NoRoom(Exception):
    """The script waited its whole timeout for room to run; the message says which limit."""


class Budget:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running = 0
        self.memory_mb = 0
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @asynccontextmanager
    async def room(self, limits: CodeModeSettings) -> AsyncIterator[None]:
        """Hold room for one script under ``limits`` (waiting for it, up to the timeout)."""
        need = limits.max_memory_mb
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                if self._fits(need, limits):
                    self.running += 1
                    self.memory_mb += need
                    break
                woken: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, woken))
            left = started + limits.timeout - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                await asyncio.wait_for(woken, left)
            except TimeoutError:
                with self._lock:
                    why = self._why(need, limits)
                raise NoRoom(f"the script did not start: {why}; it waited "
                             f"{limits.timeout:g} s (its timeout) for another to finish") from None
            finally:
                with self._lock:
                    self._forget(woken)
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1
                self.memory_mb -= need
                waiters, self._waiters = self._waiters, []
            for owner, future in waiters:
                owner.call_soon_threadsafe(_wake, future)

    def _fits(self, need: int, limits: CodeModeSettings) -> bool:
        return (self.running < limits.max_scripts
                and self.memory_mb + need <= limits.max_total_memory_mb)

    def _why(self, need: int, limits: CodeModeSettings) -> str:
        if self.running >= limits.max_scripts:
            return (f"{self.running} scripts were already running, the most allowed at once "
                    "(code_mode max_scripts)")
        return (f"the scripts running held {self.memory_mb} MB and this one needs {need} MB "
                f"more, over the {limits.max_total_memory_mb} MB all scripts may take "
                "together (code_mode max_total_memory_mb)")

    def _forget(self, future: asyncio.Future[None]) -> None:
        self._waiters = [(owner, f) for owner, f in self._waiters if f is not future]


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


BUDGET = Budget()
"""The one budget of this process."""
