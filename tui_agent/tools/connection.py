"""One MCP server: its connection, its health, and its tools.

A :class:`ServerConnection` owns one session in one task (the SDK requires the
task that enters a session to exit it). That task connects under a start-up
timeout, lists the tools, then serves: a heartbeat checks an idle connection,
``list_changed`` notifications refresh the tools (debounced), and a dropped or
stale connection is restarted with exponential backoff. A circuit breaker
counts consecutive failures of starts and calls: after ``max_attempts`` of them
calls fail fast and the server is re-probed once per ``circuit_cooldown``.
Calls run in the caller's task, so cancelling one (Esc, or a timeout) sends the
server ``notifications/cancelled``; a late reply is dropped by the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from tui_agent.config.models import ServerConfig
from tui_agent.tools.text import clean

State = Literal["connecting", "connected", "degraded", "failed", "disabled", "idle"]
"""``idle``: a lazy server not started yet, or stopped after ``idle_timeout``; its tools
stay listed and a call starts it."""
LOGGED = ("stdio", "docker", "docker-gateway")
"""Transports whose server's stderr goes to a log file."""
BACKOFF_CAP = 30.0
DEBOUNCE = 0.3
"""Seconds to gather a burst of ``list_changed`` notifications into one refresh."""
LOG_ROTATE_BYTES = 1_000_000
STDERR_TAIL_LINES = 20
MAX_PAGES = 100
CONNECTION_CLOSED, REQUEST_TIMEOUT, METHOD_NOT_FOUND = -32000, -32001, -32601


class ServerError(Exception):
    """A call that could not be made or finished; the message names the server.
    ``timeout``: the call was cancelled for taking too long."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """A snapshot of one server for a front end."""

    name: str
    state: State
    transport: str
    tools: int
    last_error: str | None
    stderr: tuple[str, ...]
    protocol: str | None
    server_info: str | None
    restarts: int
    circuit: str
    log_file: Path | None


class Breaker:
    """Closed (calls go through), open (they fail fast), half-open (one probe goes through)."""

    def __init__(self, threshold: int, cooldown: float) -> None:
        self.threshold, self.cooldown = threshold, cooldown
        self.failures = 0
        self.opened_at: float | None = None
        self.probing = False
        self.trips = 0
        """How many times the circuit opened."""

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        return "half-open" if self.probing or self.remaining() == 0 else "open"

    def remaining(self) -> float:
        if self.opened_at is None:
            return 0.0
        return max(0.0, self.opened_at + self.cooldown - time.monotonic())

    def allow(self) -> bool:
        if self.opened_at is None:
            return True
        if self.probing or self.remaining() > 0:
            return False
        self.probing = True
        return True

    def success(self) -> None:
        """A call or start worked (also: the user asked to retry now): close the circuit."""
        self.failures, self.opened_at, self.probing = 0, None, False

    def failure(self) -> None:
        self.failures += 1
        if self.probing or self.failures >= self.threshold:
            if self.opened_at is None or self.probing:
                self.trips += 1
            self.opened_at, self.probing = time.monotonic(), False


def backoff_delay(attempt: int, base: float) -> float:
    """``base x 2^(attempt-1)`` capped at 30 s, with +-20 % jitter so that servers which
    failed together do not retry together."""
    delay: float = min(BACKOFF_CAP, base * 2.0 ** max(0, attempt - 1))
    return delay * random.uniform(0.8, 1.2)


def describe_error(exc: BaseException) -> str:
    """One line for a failure, from the innermost real exception of any group."""
    leaf = _leaf(exc)
    code = getattr(leaf, "code", None)
    message = getattr(leaf, "message", None) or str(leaf) or type(leaf).__name__
    if getattr(leaf, "plain", False):  # already a sentence for the user
        return str(leaf)
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename or message}"
    if isinstance(code, int):
        return f"{message} (MCP error {code})"
    name = type(leaf).__name__
    return message if name in message else f"{name}: {message}"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup):
        real = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (real or list(exc.exceptions))[0]
    return exc


class ServerConnection:
    """One configured server, from start to close."""

    def __init__(self, name: str, config: ServerConfig, *, log_dir: Path,
                 default_timeout: float = 60.0,
                 on_change: Callable[[ServerConnection], None] | None = None) -> None:
        self.name, self.config = name, config
        self.call_timeout = config.timeout or default_timeout
        self.lazy = config.lazy_start
        self.state: State = "disabled" if config.disabled else \
            "idle" if self.lazy else "connecting"
        self.last_error: str | None = None
        self.tools: list[Any] = []
        self.tools_at = 0.0
        self.restarts = 0
        self.protocol: str | None = None
        self.server_info: str | None = None
        self.breaker = Breaker(config.max_attempts, config.circuit_cooldown)
        self.log_path = log_dir / f"{_file_safe(name)}.log" if config.transport in LOGGED \
            else None
        self._on_change = on_change
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._settled = asyncio.Event()  # the first start finished, either way
        self._wake = asyncio.Event()
        self._wake_reason = ""
        self._refresh_wanted = asyncio.Event()
        self._connect_scope: Any = None
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
        if self.config.disabled or self._task is not None:
            self._settled.set()
            return
        self._task = asyncio.create_task(self._own(), name=f"mcp-server:{self.name}")

    async def wait_started(self, timeout: float | None = None) -> bool:
        """Wait until the first start has finished (connected or failed); False on timeout."""
        try:
            async with asyncio.timeout(timeout):
                await self._settled.wait()
        except TimeoutError:
            return False
        return True

    @property
    def settled(self) -> bool:
        return self._settled.is_set()

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
                self._set("failed", f"{_first_clause(self.last_error)}; next try in {wait:.0f} s")
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

            def expire() -> None:
                nonlocal expired
                expired = True
                self._failed(f"did not start within {self.config.startup_timeout:g} s "
                             "(startup_timeout)")
                self._settled.set()
                life.cancel()

            watchdog = asyncio.get_running_loop().call_later(self.config.startup_timeout, expire)
            try:
                async with AsyncExitStack() as stack:
                    if self.log_path is not None:
                        self._log = stack.enter_context(_open_log(self.log_path))
                        self._log.write(f"\n--- tui-agent: starting {self.name} at "
                                        f"{time.ctime()} ---\n")
                        self._log.flush()
                    client = await self._connect(stack)
                    await self._fetch_tools(client)
                    watchdog.cancel()
                    self._connect_scope = None
                    await self._serve(client)
                    return True
            except Exception as exc:  # any failure of one server is that server's state
                if not expired:
                    # The transport's own account of its end (a container that exited, an
                    # exec refused) says more than the session's "connection closed".
                    self._failed(self._ended or describe_error(exc))
                return False
            finally:
                watchdog.cancel()
                self._client, self._log, self._connect_scope = None, None, None
                self._container = None
                self._connected.clear()
        return False

    def _failed(self, message: str) -> None:
        if self._stopping:
            return
        # The server's own last words; our notes in its log are not what it said.
        tail = [line for line in self.stderr_tail() if not line.startswith("[tui-agent]")]
        hint = f" (stderr: {tail[-1][:200]})" if tail and message not in tail[-1] else ""
        self.breaker.failure()
        self._set("failed" if not self._ever_connected else "degraded", message + hint)

    async def _connect(self, stack: AsyncExitStack) -> Any:
        from tui_agent.tools.transports.sdk import open_transport

        if self.config.transport == "docker":
            from tui_agent.tools.transports.docker_exec import Container

            container = Container(self.name, self.config, note=self._note,
                                  timeout=self.config.startup_timeout)
            stack.push_async_callback(container.close)
            await container.open()
            self._container = container
            transport: Any = container.exec_client(self._log, self._transport_event)
        else:
            transport = await open_transport(self.config, stack, self._log,
                                             self._transport_event)
        client = self._client_over(transport)
        await stack.enter_async_context(client)
        self.protocol = client.protocol_version
        info = client.server_info
        self.server_info = f"{clean(info.name)} {clean(info.version or '')}".strip() \
            if info else None
        return client

    def _client_over(self, transport: Any) -> Any:
        from mcp import Client
        from mcp.types import Implementation

        from tui_agent import __version__

        return Client(transport, mode=self.config.protocol, cache=None,
                      message_handler=self._on_message,
                      client_info=Implementation(name="tui-agent", version=__version__))

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

    async def _idler(self, after: float) -> None:
        """Stop the server once no call has used it for ``after`` seconds."""
        import anyio

        while True:
            quiet = time.monotonic() - self._last_use
            if quiet >= after and self._in_flight == 0:
                self._note(f"stopping: no call for {after:g} s (idle_timeout)")
                self._signal("idle")
                return
            await anyio.sleep(max(0.05, after - quiet))

    # -- health ------------------------------------------------------------------

    def _answered(self) -> None:
        self._last_answer = time.monotonic()

    def _transport_event(self, kind: str, detail: str) -> None:
        if kind == "closed":
            self._ended = detail
            self._broken(detail)

    def _note(self, line: str) -> None:
        if self._log is not None:
            self._log.write(f"[tui-agent] {line}\n")
            self._log.flush()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            first = str(message).splitlines()[1:2] or [str(message)]
            self._note(f"the server sent something that is not JSON-RPC: {first[0].strip()}")
            return
        if type(message).__name__ == "ToolListChangedNotification":
            self._refresh_wanted.set()

    async def _heartbeat(self, client: Any) -> None:
        import anyio

        interval = self.config.heartbeat_interval
        while True:
            await anyio.sleep(interval)
            if time.monotonic() - self._last_answer >= interval:
                try:
                    with anyio.fail_after(min(interval, 10.0)):
                        await self._ping(client)
                    if self.state == "degraded":
                        self._set("connected")
                except Exception as exc:
                    self._set("degraded", f"no answer to a heartbeat: {describe_error(exc)}")
            silent = time.monotonic() - self._last_answer
            if silent > self.config.stale_timeout:
                self._broken(f"no answer for {silent:.0f} s (stale_timeout)")
                return

    async def _ping(self, client: Any) -> None:
        from mcp import MCPError

        try:
            if self.protocol and self.protocol.startswith("2025"):
                await client.session.send_ping()
            else:  # the 2026 protocol has no ping; discover is its cheap request
                await client.session.send_discover(self.protocol)
        except MCPError as exc:
            if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                raise
        self._answered()  # any answer, even an error, proves the server is alive

    async def _listen(self, client: Any) -> None:
        """2026 servers announce tool changes through a subscription."""
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self._refresh_wanted.set()

    async def _refresher(self, client: Any) -> None:
        import anyio

        while True:
            await self._refresh_wanted.wait()
            await anyio.sleep(DEBOUNCE)
            self._refresh_wanted.clear()
            await self._refresh(client)

    async def _refresh(self, client: Any) -> None:
        import anyio

        try:
            with anyio.fail_after(self.config.startup_timeout):
                await self._fetch_tools(client)
        except Exception as exc:
            self._note(f"could not refresh the tools: {describe_error(exc)}")

    async def refresh_if_stale(self) -> None:
        if self._client is not None and time.monotonic() - self.tools_at > self.config.tools_ttl:
            await self._refresh(self._client)

    async def _fetch_tools(self, client: Any) -> None:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._with_retry(partial(client.list_tools, cursor=cursor))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools, self.tools_at = tools, time.monotonic()
        self._answered()
        if self._on_change is not None:
            self._on_change(self)

    async def _with_retry(self, fetch: Callable[[], Any]) -> Any:
        """A listing is safe to repeat: try once more if the first try failed in transit."""
        try:
            return await fetch()
        except Exception:
            return await fetch()

    # -- calls -------------------------------------------------------------------

    async def _usable(self) -> Any:
        if self.state == "disabled":
            raise ServerError(f"server '{self.name}' is disabled")
        if not self.breaker.allow():
            raise ServerError(
                f"server '{self.name}' is failing ({self.last_error or 'unknown error'}); "
                f"calls are refused for {self.breaker.remaining():.0f} s more (circuit open "
                f"after {self.breaker.failures} consecutive failures)")
        if self._client is None:
            if self.lazy:
                self.demand()
            try:
                async with asyncio.timeout(self.config.startup_timeout):
                    await self._connected.wait()
            except TimeoutError:
                self.breaker.failure()
                raise ServerError(f"server '{self.name}' is not connected "
                                  f"({self.state}: {self.last_error or 'starting'})") from None
        return self._client

    async def call(self, tool: str, arguments: dict[str, Any], *, retry_safe: bool) -> Any:
        """Call ``tool``; the CallToolResult. Raises :class:`ServerError` when the server
        could not answer. ``retry_safe`` (a read-only or idempotent tool) allows one
        retry after a reconnect if the connection drops mid-call."""
        self._in_flight += 1  # an idle timer never stops a server that a call waits for
        try:
            for attempt in (1, 2):
                try:
                    return await self._call_once(tool, arguments)
                except _Dropped as dropped:
                    if not retry_safe or attempt == 2:
                        raise ServerError(f"server '{self.name}' {dropped}; it is restarting. "
                                          "The call may or may not have taken effect.") from None
            raise AssertionError("unreachable")
        finally:
            self._in_flight -= 1
            self._last_use = time.monotonic()

    async def _call_once(self, tool: str, arguments: dict[str, Any]) -> Any:
        import anyio
        from mcp import MCPError

        client = await self._usable()
        now = anyio.current_time()
        cap = now + self.config.max_call_time
        with anyio.CancelScope(deadline=min(now + self.call_timeout, cap)) as scope:
            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                self._answered()
                scope.deadline = min(anyio.current_time() + self.call_timeout, cap)

            try:
                if self.config.per_call_exec and self._container is not None:
                    result = await self._call_in_own_exec(tool, arguments, progressed)
                else:
                    result = await client.call_tool(tool, arguments,
                                                    progress_callback=progressed)
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    self.breaker.failure()
                    self._broken("the connection closed during a call")
                    raise _Dropped("lost the connection during the call") from None
                self._answered()
                self.breaker.success()
                raise ServerError(f"server '{self.name}' rejected the call of {tool}: "
                                  f"{clean(exc.message)} (MCP error {exc.code})") from None
        if scope.cancelled_caught:
            self.breaker.failure()
            limit = self.config.max_call_time if anyio.current_time() >= cap \
                else self.call_timeout
            raise ServerError(f"{tool} on server '{self.name}' did not answer within "
                              f"{limit:g} s; it was cancelled", timeout=True) from None
        self._answered()
        self.breaker.success()
        return result

    async def _call_in_own_exec(self, tool: str, arguments: dict[str, Any],
                                progressed: Any) -> Any:
        """``per_call_exec``: a fresh exec of the server for this call alone, so no state
        survives from one call to the next. Its end is not the server's end."""
        from mcp import MCPError

        from tui_agent.tools.transports.docker_exec import DockerFailure

        ended: list[str] = []

        async def once() -> Any:
            try:
                async with self._client_over(self._container.exec_client(
                        self._log, lambda kind, detail: ended.append(detail))) as client:
                    return await client.call_tool(tool, arguments,
                                                  progress_callback=progressed)
            except BaseExceptionGroup as group:  # from the transport's task group
                raise _leaf(group) from None

        try:
            return await once()
        except DockerFailure as exc:
            self.breaker.failure()
            raise ServerError(f"server '{self.name}': {exc}") from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise
            self.breaker.failure()  # this call's own exec died; the server's stays up
            raise ServerError(f"server '{self.name}': the exec running {tool} ended before "
                              f"it answered ({ended[0] if ended else 'closed'}); the call may "
                              "or may not have taken effect") from None

    async def request(self, what: Callable[[Any], Any]) -> Any:
        """Run one non-tool request (resources, prompts) under the call timeout."""
        import anyio

        client = await self._usable()
        with anyio.fail_after(self.call_timeout):
            result = await what(client)
        self._answered()
        return result

    # -- reporting ---------------------------------------------------------------

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> list[str]:
        """The last lines the server wrote to stderr since it last started."""
        if self.log_path is None:
            return []
        try:
            with self.log_path.open("rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - 16_384))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return []
        text = text.rsplit("--- tui-agent: starting", 1)[-1]
        shown = [clean(ln)[:300] for ln in text.splitlines()[1:] if ln.strip()]
        return shown[-lines:]

    def status(self) -> ServerStatus:
        return ServerStatus(self.name, self.state, self.config.transport or "?", len(self.tools),
                            self.last_error, tuple(self.stderr_tail()), self.protocol,
                            self.server_info, self.restarts, self.breaker.state, self.log_path)


class _Dropped(Exception):
    pass


def _first_clause(error: str | None) -> str:
    """An error without an earlier "; next try in ..." suffix."""
    return (error or "failing").split("; next try in")[0]


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "server"


def _open_log(path: Path) -> Any:
    """The server's stderr log, rotated once it passes 1 MB."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_ROTATE_BYTES:
            path.replace(path.with_suffix(".log.1"))
    return path.open("a", encoding="utf-8", errors="replace")
