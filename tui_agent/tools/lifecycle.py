"""The life of one MCP server's session: start it, keep it healthy, restart it, stop it.

A :class:`ServerLifecycle` owns one session in one task (the SDK requires the task
that enters a session to exit it). That task connects under a start-up timeout, lists
the tools, then serves: a heartbeat checks an idle connection, ``list_changed``
notifications refresh the tools (debounced), an unused server stops after its
``idle_timeout``, and a dropped or stale connection is restarted with exponential
backoff. A circuit breaker counts consecutive failures of starts and calls. What runs
beside a connected session (heartbeat, refreshes, the idle stop) is
:class:`~tui_agent.tools.upkeep.Upkeep`'s; the call path is
:class:`~tui_agent.tools.call_path.CallPath`, built on this.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from tui_agent.config.interpolate import MIN_SECRET_LEN
from tui_agent.config.models import ServerConfig
from tui_agent.tools.backoff import backoff_delay
from tui_agent.tools.breaker import Breaker
from tui_agent.tools.client import (
    NOTHING,
    PERSON_POLL,
    ClientSide,
    open_client,
    server_label,
)
from tui_agent.tools.errors import describe_error, first_clause
from tui_agent.tools.server_log import STARTING, log_path, open_log, stderr_tail
from tui_agent.tools.upkeep import State, Upkeep

__all__ = ["ServerLifecycle", "State"]


class ServerLifecycle(Upkeep):
    """One configured server's session, from start to close."""

    def __init__(self, name: str, config: ServerConfig, *, log_dir: Path,
                 default_timeout: float = 60.0,
                 on_change: Callable[[Any], None] | None = None,
                 client_side: ClientSide = NOTHING,
                 secrets: frozenset[str] = frozenset(), refused: str | None = None) -> None:
        """``on_change`` is told of each change of state or tools; ``client_side`` is
        what the server may ask of us and how we authenticate (see :mod:`.client`);
        ``secrets`` (the configuration's) are masked in its log file, with the values of
        its own ``env``. A server ``refused`` (why, for people: a ``${VAR}`` of its config
        is not set) is failed from the start and never started."""
        self.name, self.config = name, config
        self.secrets, self.refused = secrets, refused
        self.call_timeout = config.timeout or default_timeout
        self.lazy = config.lazy_start
        self.state: State = "disabled" if config.disabled else \
            "idle" if self.lazy else "connecting"
        self.last_error: str | None = None
        if refused is not None and not config.disabled:
            self.state, self.last_error, self.lazy = "failed", refused, False
        self.tools: list[Any] = []
        self.tools_at = 0.0
        self.restarts = 0
        self.protocol: str | None = None
        self.server_info: str | None = None
        self.breaker = Breaker(config.max_attempts, config.circuit_cooldown)
        self.log_path = log_path(log_dir, name, config.transport)
        self.side = client_side
        self._on_change = on_change
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._settled = asyncio.Event()  # the first start finished, either way
        self.spawned = asyncio.Event()
        """Set once a stdio server's process has been spawned (:meth:`Hub.start_early`)."""
        self._wake = asyncio.Event()
        self._wake_reason = ""
        self._refresh_wanted = asyncio.Event()
        self._connect_scope: Any = None
        self._count_afresh: Callable[[], None] | None = None
        self._stopping = False
        self._last_answer = time.monotonic()
        self._ever_connected = False
        self._log: Any = None
        self._container: Any = None  # docker: where the server runs
        self._ended: str | None = None  # why the transport ended, as it told us
        self._demand = asyncio.Event()  # a lazy or idle server is wanted
        self._in_flight = 0
        self._went_idle = False
        self._last_use = time.monotonic()

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> None:
        if self._task is not None:  # started already (early, or a second start)
            return
        if self.config.disabled or self.refused is not None:
            self._settled.set()
            return
        self._task = asyncio.create_task(self._own(), name=f"mcp-server:{self.name}")

    def restart_clock(self) -> None:
        """The start under way gets its whole ``startup_timeout`` again from now: one
        begun early (``run`` spawns its stdio servers before its own set-up, which holds
        the event loop for seconds) is not charged for the time the loop was held."""
        if self._count_afresh is not None:
            self._count_afresh()

    async def wait_started(self, timeout: float | None = None) -> bool:
        """Wait until the first start has finished (connected or failed); False on timeout.
        A person logging in to the server meanwhile is waited for."""
        while True:
            try:
                async with asyncio.timeout(timeout):
                    await self._settled.wait()
                return True
            except TimeoutError:
                if not self.side.person_busy():
                    return False
                timeout = PERSON_POLL

    async def wait_spawned(self) -> None:
        """Until the server's process has been spawned (``spawned``) or its first start
        has ended, either way."""
        waits = [asyncio.ensure_future(e.wait()) for e in (self.spawned, self._settled)]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    @property
    def settled(self) -> bool:
        return self._settled.is_set()

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has been called (its task made)."""
        return self._task is not None

    @property
    def never_started(self) -> bool:
        """A lazy server that has not been asked for yet."""
        return self.lazy and not self._demand.is_set() and not self._ever_connected

    def demand(self) -> None:
        """Start a lazy or idle server (no-op when it runs)."""
        if not self._demand.is_set():
            self._demand.set()
            self._signal("wanted")

    def reconnect(self) -> None:
        """Restart now, whatever the backoff or the circuit says (the user asked); an
        idle server starts."""
        self.breaker.success()
        if self.state == "idle":
            self.demand()
            return
        self._signal("restart requested")

    async def close(self) -> None:
        """Stop the server. A stdio server gets EOF, then SIGTERM after 2 s, then SIGKILL."""
        self._stopping = True
        if self._connect_scope is not None:
            self._connect_scope.cancel()
        self._signal("closing")
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _signal(self, reason: str) -> None:
        self._wake_reason = reason
        self._wake.set()

    def _broken(self, reason: str) -> None:
        """The connection is gone: say so now, and have the owner task restart it."""
        if self._client is not None and not self._stopping:
            self._client = None  # callers now wait for the reconnect
            self._connected.clear()
            self._set("degraded", f"{reason}; reconnecting")
            self._signal(reason)

    def _set(self, state: State, error: str | None = None) -> None:
        changed = state != self.state or (error is not None and error != self.last_error)
        self.state = state
        if error is not None:
            self.last_error = error
        if changed and self._on_change is not None:
            self._on_change(self)

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but wake at once for a stop or a reconnect request."""
        self._wake.clear()
        if self._stopping:  # a stop that came before the clear must not be slept through
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    async def _wait_for_demand(self) -> None:
        while not self._demand.is_set() and not self._stopping:
            self._wake.clear()
            if self._demand.is_set() or self._stopping:
                break
            await self._wake.wait()

    async def _own(self) -> None:
        attempt = 0
        while not self._stopping:
            if self.lazy and not self._demand.is_set():
                self._set("idle")
                if self._ever_connected:
                    self._settled.set()
                await self._wait_for_demand()
                if self._stopping:
                    break
                self._set("connecting")
            if not self.breaker.allow():
                wait = self.breaker.remaining()
                self._set("failed", f"{first_clause(self.last_error)}; next try in {wait:.0f} s")
                await self._sleep(wait)
                continue
            if attempt:  # the state stays failed or degraded while it retries
                await self._sleep(backoff_delay(attempt, self.config.backoff))
                if self._stopping:
                    break
            # After a drop the first reconnect waits `backoff`; each failed try doubles it.
            attempt = 1 if await self._attempt() else attempt + 1
            if self._went_idle:
                self._went_idle = False
                attempt = 0  # stopped on purpose: the next call starts it at once
            self._settled.set()
        self._settled.set()

    async def _attempt(self) -> bool:
        """Connect, list the tools and serve until the connection ends. True if it
        connected (so the next try starts the backoff afresh)."""
        import anyio

        # One scope spans the session's whole life (the SDK's task groups must exit inside
        # the scope they were entered in). A start that overruns its timeout is reported
        # at once, not after the SDK has finished stopping the process (up to 4 s more).
        expired = False
        self._ended = None
        with anyio.CancelScope() as life:
            self._connect_scope = life
            loop = asyncio.get_running_loop()
            watchdog: list[asyncio.TimerHandle] = []

            def expire() -> None:
                nonlocal expired
                if self.side.person_busy():  # a login has its own time limit
                    watchdog[0] = loop.call_later(PERSON_POLL, expire)
                    return
                expired = True
                self._failed(f"did not start within {self.config.startup_timeout:g} s "
                             "(startup_timeout)")
                self._settled.set()
                life.cancel()

            watchdog.append(loop.call_later(self.config.startup_timeout, expire))

            def count_afresh() -> None:
                watchdog[0].cancel()
                watchdog[0] = loop.call_later(self.config.startup_timeout, expire)

            self._count_afresh = count_afresh
            try:
                async with AsyncExitStack() as stack:
                    if self.log_path is not None:
                        self._log = stack.enter_context(
                            open_log(self.log_path, self._log_secrets()))
                        self._log.write(f"\n{STARTING} {self.name} at "
                                        f"{time.ctime()} ---\n")
                    client = await self._connect(stack)
                    await self._fetch_tools(client)
                    watchdog[0].cancel()
                    self._connect_scope, self._count_afresh = None, None
                    await self._serve(client)
                    return True
            except Exception as exc:  # any failure of one server is that server's state
                if not expired:
                    # The transport's own account of its end (a container that exited, an
                    # exec refused) says more than the session's "connection closed".
                    self._failed(self._ended or describe_error(exc))
                return False
            finally:
                watchdog[0].cancel()
                self._client, self._log, self._connect_scope = None, None, None
                self._count_afresh = None
                self._container = None
                self._connected.clear()
        return False

    def _log_secrets(self) -> frozenset[str]:
        own = {v for v in self.config.env.values() if len(v) >= MIN_SECRET_LEN}
        return self.secrets | own

    def _failed(self, message: str) -> None:
        if self._stopping:
            return
        # The server's own last words; our notes in its log are not what it said.
        if self._log is not None:
            self._log.flush()
        tail = [line for line in stderr_tail(self.log_path)
                if not line.startswith("[tui-agent]")]
        hint = f" (stderr: {tail[-1][:200]})" if tail and message not in tail[-1] else ""
        self.breaker.failure()
        self._set("failed" if not self._ever_connected else "degraded", message + hint)

    async def _connect(self, stack: AsyncExitStack) -> Any:
        client, self._container = await open_client(
            self.name, self.config, self.side, stack, errlog=self._log,
            on_event=self._transport_event, on_message=self._on_message, note=self._note)
        self.protocol, self.server_info = client.protocol_version, server_label(client)
        return client

    async def _serve(self, client: Any) -> None:
        import anyio

        self._last_use = time.monotonic()
        self._client = client
        self._ever_connected = True
        self._answered()
        self.breaker.success()
        self._set("connected")
        self._connected.set()
        self._settled.set()
        self._wake.clear()
        if self._stopping:
            return
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._heartbeat, client)
            tasks.start_soon(self._refresher, client)
            if self.protocol and not self.protocol.startswith("2025"):
                tasks.start_soon(self._listen, client)
            if self.config.idle_after is not None:
                tasks.start_soon(self._idler, self.config.idle_after)
            await self._wake.wait()
            tasks.cancel_scope.cancel()
        if self._wake_reason == "idle":
            # From here a call waits for a fresh start; one that comes while this session
            # closes finds the demand it sets still standing.
            self._went_idle, self.lazy = True, True
            self._demand.clear()
            self._client = None
            self._connected.clear()
            self._set("idle")
        elif not self._stopping:
            self.restarts += 1
            self._set("degraded", f"{self._wake_reason}; reconnecting")

    # -- what the transport tells -----------------------------------------------

    def _transport_event(self, kind: str, detail: str) -> None:
        if kind == "spawned":
            self.spawned.set()
        elif kind == "closed":
            self._ended = detail
            self._broken(detail)

    def _note(self, line: str) -> None:
        if self._log is not None:
            self._log.write(f"[tui-agent] {line}\n")  # written through at once

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            first = str(message).splitlines()[1:2] or [str(message)]
            self._note(f"the server sent something that is not JSON-RPC: {first[0].strip()}")
            return
        if type(message).__name__ == "ToolListChangedNotification":
            self._refresh_wanted.set()
