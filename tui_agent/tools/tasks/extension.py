"""The client side of the tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``,
MCP 2026-07-28) as an MCP SDK ``ClientExtension``.

Given to every client (:func:`~tui_agent.tools.client.client_over`), it is declared in the
client capabilities the SDK stamps into each request's ``_meta`` on a 2026-07-28 session:
that is the extension's per-request opt-in, on ``tools/call`` and on the ``tasks/*``
requests alike (a server answers those only for a client that declares it). The SDK drops
it from a 2025-11-25 handshake, where tasks are the core's
(:mod:`~tui_agent.tools.tasks.in_core`).

A ``tools/call`` the server answers with a task (``resultType: "task"``) reaches the
extension's result claim, whose resolver follows the task to its end
(:class:`~tui_agent.tools.tasks.follow.Follower`) and gives back the call's result, so
the caller sees an ordinary ``CallToolResult``. A call the server answers directly is
untouched. ``notifications/tasks`` reach the follower of their task through the
extension's notification binding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim

from tui_agent.tools.tasks.common import TASK_CALL, TaskCall
from tui_agent.tools.tasks.follow import Follower, Watchers
from tui_agent.tools.tasks.offer import TASKS_EXTENSION
from tui_agent.tools.tasks.wire import CreatedTask, TaskNotice


class TasksExtension(ClientExtension):
    """The tasks extension for one connection (its followers are its own)."""

    identifier = TASKS_EXTENSION

    def __init__(self) -> None:
        self._watchers: Watchers = {}

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return [NotificationBinding(method="notifications/tasks", params_type=TaskNotice,
                                    handler=self._noticed)]

    async def _noticed(self, notice: TaskNotice) -> None:
        told = self._watchers.get(notice.task_id)
        if told is not None:
            told(notice)

    async def _resolve(self, created: CreatedTask, context: ClaimContext) -> Any:
        call = TASK_CALL.get() or TaskCall(server="?", alive=lambda: None, news=None)
        return await Follower(context.session, context.tool_name, call,
                              self._watchers).run(created)
