"""One MCP server as the hub sees it: :class:`ServerConnection` is the server's
:class:`~tui_agent.tools.lifecycle.ServerLifecycle` (its logins' part in
:mod:`~tui_agent.tools.login_wait`) plus the call path (tool calls and
other requests, under their timeouts and the circuit breaker) and its status.

Calls run in the caller's task, so cancelling one (Esc, or a timeout) sends the
server ``notifications/cancelled``; a late reply is dropped by the SDK. A call made
while the server is starting waits for it (a lazy or idle server is started).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tui_agent.tools.auth.step_up import REFUSED, Refused
from tui_agent.tools.client import client_over, instructions_of
from tui_agent.tools.errors import (
    CONNECTION_CLOSED,
    URL_ELICITATION_REQUIRED,
    Dropped,
    LinksFirst,
    ServerError,
    innermost,
)
from tui_agent.tools.lifecycle import State
from tui_agent.tools.login_wait import LoginAware
from tui_agent.tools.news import CALL_NEWS, SEVERE, LogLine, News, log_line, progress_of
from tui_agent.tools.server_log import STDERR_TAIL_LINES, stderr_tail
from tui_agent.tools.text import clean

RESOURCE_LOOK = 5.0
"""Seconds a server's first resource listing may take at connect."""


async def has_resources(client: Any, within: float = RESOURCE_LOOK) -> bool:
    """The server declares resources and lists at least one resource or template (many
    declare the capability with nothing behind it). A listing that fails, or takes longer
    than ``within`` seconds, counts as none: the server starts all the same."""
    import anyio

    if client.server_capabilities.resources is None:
        return False
    for method, field in (("list_resources", "resources"),
                          ("list_resource_templates", "resource_templates")):
        with anyio.move_on_after(within):
            try:
                if getattr(await getattr(client, method)(), field):
                    return True
            except Exception:  # noqa: S112 (a server that cannot list has none to offer)
                continue
    return False


def needs_task(tool: Any) -> bool:
    """A tool that runs only as a task (``execution.taskSupport = "required"``): the SDK
    has no client side for tasks yet, so such a tool is not offered (every call would
    fail). Where tasks are optional, a plain call works."""
    return getattr(getattr(tool, "execution", None), "task_support", None) == "required"


LOG_LINES = 200
"""Log lines of a server kept for the servers screen."""


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
    logs: tuple[str, ...] = ()
    """The last lines the server logged (``level: text``), oldest first."""
    held_back: tuple[str, ...] = ()
    """Tools of the server not offered to the model, each with why."""
    instructions: str | None = None
    """What the server says about using it, as the model gets it."""


class ServerConnection(LoginAware):
    """One configured server, from start to close, and the calls made to it; the last
    lines it logged (``logs``), each also told to ``on_log`` and, when a warning or worse,
    to the calls in flight."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.logs: deque[LogLine] = deque(maxlen=LOG_LINES)
        self.on_log: Callable[[LogLine], None] | None = None
        self._listening: set[News] = set()
        outer = self.side.logging

        async def logged(params: Any) -> None:
            line = log_line(self.name, params)
            self.logs.append(line)
            if self.on_log is not None:
                self.on_log(line)
            if line.level in SEVERE:
                for news in list(self._listening):
                    news(line)
            if outer is not None:
                await outer(params)

        self.side = replace(self.side, logging=logged)
        self.instructions: str | None = None
        """What the server says about using it (``instructions``), cleaned and capped."""
        self.has_resources = False
        """The server offers resources (its model-facing resource tools are listed)."""
        self.watched: set[str] = set()
        """Resources followed for changes (:meth:`watch`)."""
        self.on_updated: Callable[[str, str], None] | None = None
        """Told ``(server, uri)`` when a watched resource changed."""
        self._relisten = asyncio.Event()

    async def _connect(self, stack: Any) -> Any:
        client = await super()._connect(stack)
        self.instructions = instructions_of(client)
        self.has_resources = await has_resources(client)
        return client

    async def _usable(self) -> Any:
        if self.state == "disabled":
            raise ServerError(f"server '{self.name}' is disabled")
        if self.login_failed and self.state == "failed":  # it waits for a person, not a call
            raise ServerError(f"server '{self.name}': {self.last_error}")
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
                except Dropped as dropped:
                    if not retry_safe or attempt == 2:
                        raise ServerError(f"server '{self.name}' {dropped}; it is restarting. "
                                          "The call may or may not have taken effect.") from None
                except LinksFirst as first:
                    # -32042: the server wants links opened first (a login of its own, a
                    # payment); the person is asked, and the call is tried once more.
                    if attempt == 2 or not await self._open_links(first.error):
                        raise ServerError(f"server '{self.name}' needs you to open a link "
                                          f"before {tool} can run, and it was not opened"
                                          ) from None
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
        news = CALL_NEWS.get()
        if news is not None:
            self._listening.add(news)
        with anyio.CancelScope(deadline=min(now + self.call_timeout, cap)) as scope:
            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                self._answered()
                scope.deadline = min(anyio.current_time() + self.call_timeout, cap)
                if news is not None:
                    news(progress_of(progress, total, message))
                if self.side.progress is not None:
                    await self.side.progress(tool, progress, total, message)

            stop_waiting = self._wait_for_person(scope)
            refused: list[Refused] = []  # this call's step-ups that could not run
            told = REFUSED.set(refused)
            try:
                if self.config.per_call_exec and self._container is not None:
                    result = await self._call_in_own_exec(tool, arguments, progressed)
                else:
                    result = await client.call_tool(tool, arguments,
                                                    progress_callback=progressed)
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    self._broken("the connection closed during a call")
                    if refused:  # the step-up's login was not answered: a login, not the server
                        raise ServerError(refused[0].told(self.name, tool)) from None
                    self.breaker.failure()
                    raise Dropped("lost the connection during the call") from None
                self._answered()
                self.breaker.success()
                if exc.code == URL_ELICITATION_REQUIRED and self.side.elicitation is not None:
                    raise LinksFirst(exc.error) from None
                if refused:  # a step-up no login could answer
                    raise ServerError(refused[0].told(self.name, tool)) from None
                raise ServerError(f"server '{self.name}' rejected the call of {tool}: "
                                  f"{clean(exc.message)} (MCP error {exc.code})") from None
            finally:
                REFUSED.reset(told)
                stop_waiting()
                if news is not None:
                    self._listening.discard(news)
        if scope.cancelled_caught:
            self.breaker.failure()
            limit = self.config.max_call_time if anyio.current_time() >= cap \
                else self.call_timeout
            raise ServerError(f"{tool} on server '{self.name}' did not answer within "
                              f"{limit:g} s; it was cancelled", timeout=True) from None
        self._answered()
        self.breaker.success()
        return result

    async def _open_links(self, error: Any) -> bool:
        """Ask the person to open each link of a -32042 error; True if every one was."""
        from mcp.shared.exceptions import UrlElicitationRequiredError

        assert self.side.elicitation is not None
        try:
            links = UrlElicitationRequiredError.from_error(error).elicitations
        except ValueError:
            return False
        for link in links:
            answer = await self.side.elicitation(None, link)  # type: ignore[arg-type]
            if getattr(answer, "action", None) != "accept":
                return False
        return bool(links)

    async def _call_in_own_exec(self, tool: str, arguments: dict[str, Any],
                                progressed: Any) -> Any:
        """``per_call_exec``: a fresh exec of the server for this call alone, so no state
        survives from one call to the next. Its end is not the server's end."""
        from mcp import MCPError

        from tui_agent.tools.transports.docker_engine import DockerFailure

        ended: list[str] = []

        async def once() -> Any:
            try:
                async with client_over(self._container.exec_client(
                        self._log, lambda kind, detail: ended.append(detail)),
                        self.config, self.side, self._on_message) as client:
                    return await client.call_tool(tool, arguments,
                                                  progress_callback=progressed)
            except BaseExceptionGroup as group:  # from the transport's task group
                raise innermost(group) from None

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

    async def watch(self, uri: str) -> bool:
        """Follow changes of resource ``uri``: ``resources/subscribe`` on a 2025 session
        whose server can, the ``subscriptions/listen`` stream (reopened with it) on
        2026-07-28. False when the server cannot say."""
        client = self._client
        if self.state != "connected" or client is None:
            return False
        legacy = (self.protocol or "").startswith("2025")
        resources = client.server_capabilities.resources
        if legacy and not (resources and resources.subscribe):
            return False
        if uri not in self.watched:
            self.watched.add(uri)
            if legacy:
                await self.request(lambda c: c.subscribe_resource(uri))
            else:
                self._relisten.set()
        return True

    def _updated(self, uri: str) -> None:
        if uri in self.watched and self.on_updated is not None:
            self.on_updated(self.name, uri)

    async def _on_message(self, message: Any) -> None:
        if type(message).__name__ == "ResourceUpdatedNotification":
            self._updated(str(message.params.uri))
        await super()._on_message(message)

    async def _listen(self, client: Any) -> None:
        """2026 servers announce tool changes and watched resources' changes through a
        subscription, reopened when a resource is added to it."""
        import contextlib

        import anyio
        from mcp.client.subscriptions import ResourceUpdated

        while True:
            self._relisten.clear()
            with contextlib.suppress(Exception):
                async with client.listen(tools_list_changed=True,
                                         resource_subscriptions=sorted(self.watched)) as events, \
                        anyio.create_task_group() as group:
                    async def again() -> None:
                        await self._relisten.wait()
                        group.cancel_scope.cancel()

                    group.start_soon(again)
                    async for event in events:
                        if isinstance(event, ResourceUpdated):
                            self._updated(str(event.uri))
                        else:
                            self._refresh_wanted.set()
                    group.cancel_scope.cancel()
            await self._relisten.wait()

    async def roots_changed(self) -> None:
        """``notifications/roots/list_changed``, if connected in a 2025 protocol and offered
        roots (in 2026-07-28 a server asks for them with each request that needs them)."""
        import warnings

        if self.state == "connected" and self._client is not None and \
                self.side.list_roots is not None and (self.protocol or "").startswith("2025"):
            with warnings.catch_warnings():  # deprecated in 2026-07-28 only (SEP-2577)
                warnings.simplefilter("ignore")
                await self._client.session.send_roots_list_changed()

    # -- reporting ---------------------------------------------------------------

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> list[str]:
        """The last lines the server wrote to stderr since it last started."""
        if self._log is not None:
            self._log.flush()  # what is still in the pipe
        return stderr_tail(self.log_path, lines)

    def status(self) -> ServerStatus:
        return ServerStatus(self.name, self.state, self.config.transport or "?", len(self.tools),
                            self.last_error, tuple(self.stderr_tail()), self.protocol,
                            self.server_info, self.restarts, self.breaker.state, self.log_path,
                            tuple(f"{line.level}: {line.text}" for line in
                                  list(self.logs)[-STDERR_TAIL_LINES:]),
                            tuple(f"{clean(t.name)}: it runs only as a task, which tui-agent "
                                  "cannot run yet" for t in self.tools if needs_task(t)),
                            self.instructions)


