"""Tool calls that run as tasks (SEP-1686, MCP 2025-11-25): a tool whose
``execution.taskSupport`` is ``required`` or ``optional``, on a server that declares
``capabilities.tasks.requests.tools.call``, is called with a ``task`` param. The server
answers at once with a task (``CreateTaskResult``); :func:`call_as_task` then polls
``tasks/get`` at the server's ``pollInterval``, tells the caller each change of status
(:class:`~tui_agent.tools.news.TaskNews`) and each progress report (the request's
progress token stays valid for the task's life, so reports come after the first answer
too: :class:`ProgressRoutes` hands them on), and fetches the result with ``tasks/result``.

A task that needs input (``input_required``) is answered through ``tasks/result``, on
whose stream the server sends its elicitation: it reaches the person through the same
elicitation handler as any other; polling goes on beside it. A call cancelled on our
side (Esc, the turn's stop, a script's end, its timeout) sends ``tasks/cancel`` before
it lets go: the server would otherwise go on working for nobody.

The client declares nothing for this: the spec's client ``tasks`` capability is about
requests the *server* makes as tasks, which tui-agent does not take. In 2026-07-28 tasks
left the core for an extension with another design (``tasks/update``, no
``tasks/result``): :mod:`.extension`.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from tui_agent.tools.errors import ServerError, innermost
from tui_agent.tools.news import News, TaskNews
from tui_agent.tools.tasks.common import CANCEL_WAIT, TERMINAL, clamped, ended
from tui_agent.tools.tasks.common import said as cleaned_words
from tui_agent.tools.text import clean

Progressed = Callable[[float, float | None, str | None], Awaitable[None]]


class ProgressRoutes(dict[str, Progressed]):
    """The progress tokens of the tasks in flight on one connection and whom to tell:
    a task's reports come as notifications the SDK no longer ties to a request (its
    ``tools/call`` was answered long ago), so the connection's message handler routes them
    here (:meth:`deliver`)."""

    async def deliver(self, message: Any) -> None:
        if type(message).__name__ != "ProgressNotification":
            return
        params = message.params
        told = self.get(str(params.progress_token))
        if told is not None:
            await told(float(params.progress), params.total, params.message)


async def call_as_task(client: Any, tool: str, arguments: dict[str, Any], *,
                       ttl: float, routes: ProgressRoutes, progressed: Progressed,
                       alive: Callable[[], None], news: News | None,
                       waiting: Callable[[float], None] = lambda seconds: None) -> Any:
    """Call ``tool`` as a task and give back its ``CallToolResult`` (see the module).
    ``ttl``: seconds the server is asked to keep the task; ``alive``: told at each answer
    of the server (the call's timer starts again); ``waiting``: told of each wait between
    two looks (the timer counts from its end). Raises :class:`ServerError` for a task
    that failed without a result or that the server cancelled; ``MCPError`` for a refused
    request (the caller words it)."""
    import mcp_types as types

    token = f"task-{uuid.uuid4().hex}"
    routes[token] = progressed
    try:
        request = types.CallToolRequest(params=types.CallToolRequestParams(
            name=tool, arguments=arguments, task=types.TaskMetadata(ttl=round(ttl * 1000)),
            _meta=types.RequestParamsMeta(progress_token=token)))
        created = types.CreateTaskResult.model_validate(
            await _send_raw(client.session, request), by_name=False)
        alive()
        return await _follow(client, tool, created.task, alive, news, waiting)
    finally:
        routes.pop(token, None)


async def _follow(client: Any, tool: str, task: Any, alive: Callable[[], None],
                  news: News | None, waiting: Callable[[float], None]) -> Any:
    """Poll ``task`` to its end and fetch its result; cancel it if we are cancelled."""
    import anyio

    task_id = clean(task.task_id)[:200]
    last: tuple[str, str | None] | None = None
    try:
        while True:
            said = (str(task.status), _said(task.status_message))
            if said != last and news is not None:
                news(TaskNews(task_id, *said))
            last = said
            if task.status in TERMINAL:
                return await _outcome(client, tool, task, said[1])
            if task.status == "input_required":
                return await _answered(client, tool, task, alive, news, last, waiting)
            waiting(poll_interval(task))
            await anyio.sleep(poll_interval(task))
            task = await _get(client, task.task_id)
            alive()
    except ServerError:
        raise  # the task ended (failed, or the server cancelled it): nothing to cancel
    except BaseException:  # cancelled (Esc, stop, timeout), or the connection went
        if task.status not in TERMINAL:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_WAIT):
                await _cancel(client, task.task_id)
        raise


async def _answered(client: Any, tool: str, task: Any, alive: Callable[[], None],
                    news: News | None, last: tuple[str, str | None],
                    waiting: Callable[[float], None]) -> Any:
    """``input_required``: ask ``tasks/result`` (the server's questions come on its stream
    and go to the person) while polling goes on for the card."""
    import anyio
    from mcp import MCPError

    outcome: list[Any] = []
    current = task

    async def result(group: Any) -> None:
        try:
            outcome.append(await _result(client, task.task_id))
        except MCPError as exc:
            outcome.append(exc)
        group.cancel_scope.cancel()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(result, group)
            while True:
                waiting(poll_interval(current))
                await anyio.sleep(poll_interval(current))
                current = await _get(client, task.task_id)
                alive()
                said = (str(current.status), _said(current.status_message))
                if said != last and news is not None:
                    news(TaskNews(clean(task.task_id)[:200], *said))
                last = said
    except BaseExceptionGroup as group_error:  # anyio groups what a task group raises
        raise innermost(group_error) from None
    if current.status not in TERMINAL:  # the result came before a poll saw the task end:
        with contextlib.suppress(MCPError):  # its last status (failed?) decides the reading
            current = await _get(client, task.task_id)
        said = (str(current.status), _said(current.status_message))
        if said != last and news is not None:  # the card ends as the task did, not working
            news(TaskNews(clean(task.task_id)[:200], *said))
        last = said  # its words (a failure's) are the ones the outcome quotes
    if isinstance(outcome[0], MCPError):
        raise ServerError(_ended(tool, current, last[1] or clean(outcome[0].message)))
    return _checked(tool, current, outcome[0], last[1])


async def _outcome(client: Any, tool: str, task: Any, message: str | None) -> Any:
    """The result of a task that ended: ``tasks/result`` gives what the call would have
    given (a result, or the error it failed with)."""
    from mcp import MCPError

    try:
        result = await _result(client, task.task_id)
    except MCPError as exc:
        if task.status == "completed":
            raise
        raise ServerError(_ended(tool, task, message or clean(exc.message))) from None
    return _checked(tool, task, result, message)


def _checked(tool: str, task: Any, result: Any, message: str | None) -> Any:
    """``result``, marked an error when the task says it failed; a task the server
    cancelled is an error whatever it left behind."""
    if task.status == "cancelled":
        raise ServerError(_ended(tool, task, message))
    if task.status == "failed" and not result.is_error:
        return result.model_copy(update={"is_error": True})
    return result


def _ended(tool: str, task: Any, message: str | None) -> str:
    return ended(tool, task.task_id, str(task.status), message)


def poll_interval(task: Any) -> float:
    """Seconds until the next look: the server's ``pollInterval``, within bounds."""
    return clamped(task.poll_interval)


def _said(message: str | None) -> str | None:
    return cleaned_words(message)


async def _get(client: Any, task_id: str) -> Any:
    import mcp_types as types

    return await client.session.send_request(
        types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)),
        types.GetTaskResult)


async def _result(client: Any, task_id: str) -> Any:
    import mcp_types as types

    return await client.session.send_request(
        types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
        types.CallToolResult)


async def _cancel(client: Any, task_id: str) -> None:
    import contextlib

    import mcp_types as types

    with contextlib.suppress(Exception):  # ended meanwhile, or the server is gone
        await client.session.send_request(
            types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)),
            types.CancelTaskResult)


async def _send_raw(session: Any, request: Any) -> dict[str, Any]:
    """``tools/call`` with a task, answered by a ``CreateTaskResult``: the SDK checks every
    ``tools/call`` answer as a ``CallToolResult`` (it has no client side for tasks), so
    this one request goes to the session's dispatcher the way ``send_request`` sends it
    (stamped for the protocol in use, under the session's read timeout) and its answer
    is read here."""
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    timeout = session._session_read_timeout_seconds
    if timeout is not None:
        opts["timeout"] = timeout
    raw: dict[str, Any] = await session._dispatcher.send_raw_request(
        data["method"], data.get("params"), opts)
    return raw
