"""A server's call path: tool calls and other requests (resources, prompts), each under
its timeout and the circuit breaker. :class:`CallPath` sits between the server's logins
(:class:`~tui_agent.tools.login_wait.LoginAware`) and the rest of what the hub sees of it
(:class:`~tui_agent.tools.connection.ServerConnection`).

Calls run in the caller's task, so cancelling one (Esc, or a timeout) sends the
server ``notifications/cancelled``; a late reply is dropped by the SDK. A call made
while the server is starting waits for it (a lazy or idle server is started). What goes
wrong on the way is told for what it is: a dropped connection (a read-only call is tried
once more after the reconnect), links the server wants opened first (``-32042``), a
step-up no login could answer (:mod:`~tui_agent.tools.auth.step_up`), a timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from tui_agent.config.builtin_server import is_builtin
from tui_agent.tools.auth.step_up import REFUSED, Refused
from tui_agent.tools.call_meta import CALL_META
from tui_agent.tools.client import client_over
from tui_agent.tools.errors import (
    CONNECTION_CLOSED,
    MISSING_CAPABILITY,
    URL_ELICITATION_REQUIRED,
    Dropped,
    LinksFirst,
    ServerError,
    innermost,
    misfit,
)
from tui_agent.tools.login_wait import LoginAware
from tui_agent.tools.news import CALL_NEWS, News, progress_of
from tui_agent.tools.tasks import ProgressRoutes, call_as_task, runs_as_task
from tui_agent.tools.tasks.common import TASK_CALL, TaskCall
from tui_agent.tools.tasks.offer import missing_capability
from tui_agent.tools.text import clean


class CallPath(LoginAware):
    """The calls made to one server (see the module); ``_listening``: the news listeners
    of the calls in flight."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listening: set[News] = set()
        self._task_progress = ProgressRoutes()

    async def _usable(self) -> Any:
        if self.state == "disabled":
            raise ServerError(f"server '{self.name}' is disabled")
        if self.login_failed and self.state == "failed":  # it waits for a person, not a call
            raise ServerError(f"server '{self.name}': {self.last_error}")
        if not self.breaker.allow():
            raise ServerError(
                f"server '{self.name}' is failing ({self.last_error or 'unknown error'}); "
                f"calls are refused for {self.breaker.remaining():.0f} s more (paused "
                f"after {self.breaker.failures} failures in a row; reconnecting the server "
                "tries it at once)")
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
        from pydantic import ValidationError

        client = await self._usable()
        now = anyio.current_time()
        cap = now + self.config.max_call_time
        news = CALL_NEWS.get()
        if news is not None:
            self._listening.add(news)
        with anyio.CancelScope(deadline=min(now + self.call_timeout, cap)) as scope:
            def alive() -> None:
                self._answered()
                scope.deadline = min(anyio.current_time() + self.call_timeout, cap)

            def waiting(seconds: float) -> None:
                """A task's follower waits ``seconds`` (the server's poll interval) before
                its next look: the call's timer counts from the end of that wait."""
                scope.deadline = min(max(scope.deadline, anyio.current_time() + seconds
                                         + self.call_timeout), cap)

            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                alive()
                if news is not None:
                    news(progress_of(progress, total, message))
                if self.side.progress is not None:
                    await self.side.progress(tool, progress, total, message)

            stop_waiting = self._wait_for_person(scope)
            refused: list[Refused] = []  # this call's step-ups that could not run
            told = REFUSED.set(refused)
            tasked = TASK_CALL.set(TaskCall(self.name, alive, news, waiting))  # a 2026 task
            try:
                if self.config.per_call_exec and self._container is not None:
                    result = await self._call_in_own_exec(tool, arguments, progressed)
                elif self._as_task(client, tool):
                    result = await call_as_task(
                        client, tool, arguments, ttl=self.config.max_call_time,
                        routes=self._task_progress, progressed=progressed, alive=alive,
                        news=news, waiting=waiting)
                else:
                    result = await client.call_tool(tool, arguments,
                                                    progress_callback=progressed,
                                                    meta=self._meta())
            except MCPError as exc:
                raise self._failure(tool, exc, refused) from None
            except ValidationError as exc:  # the SDK checks each result against the schema
                raise ServerError(f"server '{self.name}' answered the call of {tool} with a "
                                  f"result that breaks the MCP schema: {misfit(exc)}") from None
            finally:
                TASK_CALL.reset(tasked)
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

    def _as_task(self, client: Any, tool: str) -> bool:
        """The call of ``tool`` goes as a task (:mod:`~tui_agent.tools.tasks`)."""
        listed = next((t for t in self.tools if t.name == tool), None)
        return listed is not None and runs_as_task(listed, client)

    async def _on_message(self, message: Any) -> None:
        await self._task_progress.deliver(message)  # a task's reports outlive its request
        await super()._on_message(message)

    def _meta(self) -> dict[str, Any] | None:
        """What the call's ``_meta`` carries beside the progress token: which conversation
        the call comes from (:data:`CALL_META`), for the built-in server's checkpoints
        only; another server is not told the conversation's id."""
        return CALL_META.get() if is_builtin(self.config) else None

    def _failure(self, tool: str, exc: Any, refused: list[Refused]) -> Exception:
        """What the call of ``tool`` raises for the MCP error ``exc`` (``refused``: the
        step-ups of its request that could not run)."""
        if exc.code == CONNECTION_CLOSED:
            self._broken("the connection closed during a call")
            if refused:  # the step-up's login was not answered: a login, not the server
                return ServerError(refused[0].told(self.name, tool))
            self.breaker.failure()
            return Dropped("lost the connection during the call")
        self._answered()
        self.breaker.success()
        if exc.code == URL_ELICITATION_REQUIRED and self.side.elicitation is not None:
            return LinksFirst(exc.error)
        if refused:  # a step-up no login could answer
            return ServerError(refused[0].told(self.name, tool))
        if exc.code == MISSING_CAPABILITY:
            return ServerError(missing_capability(self.name, tool, exc.error, self.protocol))
        return ServerError(f"server '{self.name}' rejected the call of {tool}: "
                           f"{clean(exc.message)} (MCP error {exc.code})")

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

