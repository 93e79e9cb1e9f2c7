"""The messages of the tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``) as
the MCP SDK's models: the SDK has the extension plumbing (result claims, notification
bindings, the ``Mcp-Name`` header of a request that names one) but not the extension's
own shapes, so they are written here from its specification.

``tasks/get``, ``tasks/update`` and ``tasks/cancel`` name their task: over streamable
HTTP the SDK sends its id as the ``Mcp-Name`` header, as the extension requires (a load
balancer routes a task's requests to the instance that holds it)."""

from __future__ import annotations

from typing import Any, Literal

import mcp_types as types


class TaskFields(types.Result):
    """A task as the server describes it (``Task``): ids and times are the server's."""

    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    """One of the five the schema allows (``TaskStatus``): another breaks the schema."""
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class CreatedTask(TaskFields):
    """``CreateTaskResult``: the answer to a ``tools/call`` that became a task."""

    result_type: Literal["task"] = "task"


class TaskState(TaskFields):
    """``DetailedTask``: what ``tasks/get`` answers and ``notifications/tasks`` carries,
    with the payload of its status (the final ``result``, the JSON-RPC ``error`` it
    failed with, or the ``inputRequests`` it waits on)."""

    result_type: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskNotice(types.NotificationParams, TaskState):
    """The params of ``notifications/tasks``: the whole task, as ``tasks/get`` would say."""


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateParams
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class Acknowledged(types.Result):
    """The empty answer to ``tasks/update`` and ``tasks/cancel``."""
