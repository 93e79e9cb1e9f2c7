"""Tool calls that run as tasks, in both of MCP's forms: the 2025-11-25 core form
(SEP-1686: the client asks with a ``task`` param, polls ``tasks/get``, fetches
``tasks/result``: :mod:`.in_core`) and the 2026-07-28 extension (SEP-2663,
``io.modelcontextprotocol/tasks``: the server decides per call, the result comes in the
task, questions come as ``inputRequests`` answered with ``tasks/update``:
:mod:`.extension` and :mod:`.follow`, its messages in :mod:`.wire`). Which tools can be
offered and which form a call takes: :mod:`.offer`; what both share: :mod:`.common`.
"""

from tui_agent.tools.tasks.in_core import ProgressRoutes, call_as_task, poll_interval
from tui_agent.tools.tasks.offer import (
    TASKS_EXTENSION,
    runs_as_task,
    server_runs_tasks,
    task_support,
    why_not_offered,
)

__all__ = ["TASKS_EXTENSION", "ProgressRoutes", "call_as_task", "poll_interval",
           "runs_as_task", "server_runs_tasks", "task_support", "why_not_offered"]
