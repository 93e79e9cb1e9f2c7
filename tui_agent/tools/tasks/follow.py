"""Following one task of the tasks extension (SEP-2663) to its end: the loop a
``CreateTaskResult`` starts (:class:`Follower`).

The task is looked at with ``tasks/get`` at the server's ``pollIntervalMs`` (clamped as
for 2025-11-25 tasks); a ``notifications/tasks`` the server sends carries the whole task
as ``tasks/get`` would, so it is taken as the look it saves and ends the wait at once. A
``subscriptions/listen`` for the task's id asks the server for those notifications while
the task runs (a server that refuses is simply polled). Each change of status or message
is told as :class:`~tui_agent.tools.news.TaskNews`.

The task's end is in the task itself (there is no ``tasks/result``): ``completed`` with
the call's result, ``failed`` with the JSON-RPC error it failed with, ``cancelled``. While
it is ``input_required`` its ``inputRequests`` (elicitation, sampling, roots) go through
the session's own handlers for those requests, the ones a request on the open session
reaches (so the person sees the same modal, and headless the same flags), each key once
however often the server repeats it, and each answer goes back by ``tasks/update``
(``inputResponses`` keyed alike). Polling goes on while a person answers.

A follow that ends before the task did (Esc, the turn's stop, a script's end, its time
limit, a question we could not answer) sends ``tasks/cancel`` on its way out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from tui_agent.tools.errors import ServerError, innermost
from tui_agent.tools.news import TaskNews
from tui_agent.tools.tasks.common import (
    CANCEL_WAIT,
    TERMINAL,
    TaskCall,
    clamped,
    ended,
    said,
    shown_id,
    status_of,
)
from tui_agent.tools.tasks.wire import (
    Acknowledged,
    CancelTask,
    GetTask,
    TaskIdParams,
    TaskState,
    UpdateParams,
    UpdateTask,
)
from tui_agent.tools.text import clean

MAX_QUESTIONS = 100
"""Input requests one task may make in all (a server that asks without end is cut off)."""
INVALID_PARAMS = -32602
"""What ``tasks/get`` answers for a task the server does not know (any more)."""


Watchers = dict[str, Callable[[TaskState], None]]
"""Task id → the follower that wants its ``notifications/tasks`` (one per connection)."""


class Follower:
    """One task followed to its end (see the module)."""

    def __init__(self, session: Any, tool: str, call: TaskCall, watchers: Watchers) -> None:
        self.session, self.tool, self.call, self.watchers = session, tool, call, watchers
        self.asked: set[str] = set()  # keys of the input requests taken to the person
        self.told: tuple[str, str | None] | None = None
        self.noticed: TaskState | None = None
        self.state: TaskState | None = None
        self._wake: Any = None
        self.interval = clamped(None)
        """Seconds between looks: the server's last ``pollIntervalMs``, clamped."""

    async def run(self, created: Any) -> Any:
        """Follow the task ``created`` (a ``CreateTaskResult``) and give back its
        ``CallToolResult``; raise :class:`ServerError` for a task that failed or was
        cancelled by the server."""
        import anyio

        state = TaskState.model_validate(created.model_dump(by_alias=True, exclude_none=True))
        self.state = state
        self.watchers[state.task_id] = self._noticed
        try:
            if state.status in TERMINAL:  # a task born ended: its payload is in tasks/get
                state = await self._get(state.task_id)
            return await self._run(state)
        except BaseException:
            if self.state.status not in TERMINAL:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_WAIT):
                    await self._cancel(state.task_id)
            raise
        finally:
            self.watchers.pop(state.task_id, None)

    async def _run(self, state: TaskState) -> Any:
        import anyio

        try:
            async with anyio.create_task_group() as group:
                if state.status not in TERMINAL:
                    group.start_soon(self._listen, state.task_id)
                result = await self._follow(state, group)
                group.cancel_scope.cancel()
        except BaseExceptionGroup as grouped:  # a question's failure, from its own task
            raise innermost(grouped) from None
        return result

    async def _follow(self, state: TaskState, group: Any) -> Any:
        import anyio

        while True:
            self.state = state
            self._tell(state)
            if state.status in TERMINAL:
                return self._outcome(state)
            if state.status == "input_required":
                for key, request in (state.input_requests or {}).items():
                    if key not in self.asked:
                        if len(self.asked) >= MAX_QUESTIONS:
                            raise ServerError(
                                f"server '{self.call.server}': the task of {self.tool} "
                                f"asked more than {MAX_QUESTIONS} questions; the task was "
                                "cancelled")
                        self.asked.add(key)
                        group.start_soon(self._answer, state.task_id, key, request)
            self._wake = anyio.Event()
            if state.poll_interval_ms is not None:  # a notice may leave it out: kept
                self.interval = clamped(state.poll_interval_ms)
            if self.noticed is None:  # one may have come while the last look was answered
                self.call.waiting(self.interval)
                with anyio.move_on_after(self.interval):
                    await self._wake.wait()
            if self.noticed is not None:
                state, self.noticed = self.noticed, None
            else:
                state = await self._get(state.task_id)
            self.call.alive()

    def _noticed(self, notice: TaskState) -> None:
        """A ``notifications/tasks`` for this task: the next look, now."""
        self.noticed = notice
        if self._wake is not None:
            self._wake.set()

    def _tell(self, state: TaskState) -> None:
        said = status_of(state)
        if said != self.told and self.call.news is not None:
            self.call.news(TaskNews(shown_id(state.task_id), *said))
        self.told = said

    def _outcome(self, state: TaskState) -> Any:
        """What the call gives back for a task that ended."""
        import mcp_types as types

        message = status_of(state)[1]
        if state.status == "completed":
            if state.result is None:
                raise ServerError(f"server '{self.call.server}': {self.tool} (task "
                                  f"{shown_id(state.task_id)}) completed without a result")
            return types.CallToolResult.model_validate(state.result, by_name=False)
        if state.status == "failed":
            error = state.error or {}
            why = said(str(error.get("message") or "")) or message
            code = error.get("code")
            if isinstance(code, int):
                why = f"{why} (MCP error {code})"
            raise ServerError(ended(self.tool, state.task_id, "failed", why))
        raise ServerError(ended(self.tool, state.task_id, "cancelled", message))

    async def _answer(self, task_id: str, key: str, raw: Any) -> None:
        """Take one input request to its handler and send the answer (``tasks/update``)."""
        import mcp_types as types
        from mcp.client.session import ClientRequestContext
        from pydantic import TypeAdapter, ValidationError

        try:
            request = TypeAdapter(types.InputRequest).validate_python(raw, by_name=False)
        except ValidationError:
            method = raw.get("method") if isinstance(raw, dict) else None
            raise ServerError(
                f"server '{self.call.server}': the task of {self.tool} asked for "
                f"{clean(str(method or 'something'))[:80]!r}, which tui-agent cannot answer "
                "(an elicitation, a sampling request or roots/list); the task was "
                "cancelled") from None
        params = getattr(request, "params", None)
        context = ClientRequestContext(session=self.session, request_id=key,
                                       meta=getattr(params, "meta", None))
        answer = await self.session.dispatch_input_request(context, request)
        if isinstance(answer, types.ErrorData):
            why = said(answer.message) or "no reason given"
            raise ServerError(f"server '{self.call.server}': the task of {self.tool} asked "
                              f"for {request.method}, which was refused: {why}; the task "
                              "was cancelled")
        sent = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        await self.session.send_request(UpdateTask(params=UpdateParams(
            task_id=task_id, input_responses={key: sent})), Acknowledged)
        self.call.alive()

    async def _get(self, task_id: str) -> TaskState:
        from mcp import MCPError

        try:
            state: TaskState = await self.session.send_request(
                GetTask(params=TaskIdParams(task_id=task_id)), TaskState)
        except MCPError as exc:
            if exc.code != INVALID_PARAMS:
                raise
            raise ServerError(
                f"server '{self.call.server}' no longer knows the task of {self.tool} "
                f"(task {shown_id(task_id)}; expired, or the server restarted?): "
                f"{said(exc.message) or 'no reason given'}") from None
        return state

    async def _cancel(self, task_id: str) -> None:
        with contextlib.suppress(Exception):  # ended meanwhile, or the server is gone
            await self.session.send_request(CancelTask(params=TaskIdParams(task_id=task_id)),
                                            Acknowledged)

    async def _listen(self, task_id: str) -> None:
        """Ask for the task's ``notifications/tasks`` (``subscriptions/listen`` with its
        id) for as long as it is followed; they arrive through the extension's binding.
        The stream's answer comes only when it ends, so this waits until cancelled. A
        server that refuses (or has no such stream) is polled all the same."""
        from mcp import MCPError

        data: dict[str, Any] = {"method": "subscriptions/listen",
                                "params": {"notifications": {"taskIds": [task_id]}}}
        opts: dict[str, Any] = {}
        self.session._stamp(data, opts)  # what the SDK's own listen() does, with taskIds
        with contextlib.suppress(MCPError):
            await self.session._dispatcher.send_raw_request(data["method"], data["params"],
                                                            opts)
