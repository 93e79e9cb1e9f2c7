"""A real MCP server (the SDK's MCPServer) that speaks the tasks extension (SEP-2663,
``io.modelcontextprotocol/tasks``, MCP 2026-07-28), written from the extension's
specification on the SDK's server extension plumbing (the SDK has no tasks of its own):
it offers the extension in its capabilities, answers some calls with a task
(``resultType: "task"``) when, and only when, the call's ``_meta`` client capabilities
declare the extension, and serves ``tasks/get`` (the task with its result, error or
``inputRequests``), ``tasks/update`` (``inputResponses``) and ``tasks/cancel``. With
``--notify`` it also serves ``subscriptions/listen`` with ``taskIds`` and sends
``notifications/tasks`` (the whole task) on that stream as each task changes.

Tools (each a task but ``direct``):

- ``research(topic, steps)``: ``steps`` steps of ``--step`` seconds, status message
  ``step N of STEPS``, then ``researched TOPIC in STEPS steps``;
- ``greet``: asks for a name (``inputRequests`` key ``name``: a form elicitation) and
  greets it, or says it was declined; ``haiku``: asks the client's model (sampling);
  ``roots``: asks for the client's roots (``roots/list``);
- ``endless``: works until cancelled; ``doomed``: fails with a JSON-RPC error;
  ``vanishing``: its task is forgotten at once (``tasks/get`` answers -32602);
- ``instant``: a task that is already completed when it is created;
- ``direct``: answered at once, no task, though the client opted in.

A task's next step starts only once a look (a ``tasks/get`` answer or a notification) has
shown the current one, so a test sees every status however late the looks come on a busy
machine. A task without the client's opt-in is refused with -32021. Each request is
written to ``--marks FILE`` (one JSON line: time, method, tool or task, whether the
request's ``_meta`` declared the extension, the status shown, the input request keys).

``--no-extension``: the server does not offer the extension (each tool answers at once).

    python -m tests.fakes.ext_task_server [--transport stdio|http --port N]
        [--poll-ms N] [--step S] [--notify] [--marks FILE] [--execution] [--no-extension]
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolRequestParams, RequestParams, SubscriptionsListenRequestParams

TASKS = "io.modelcontextprotocol/tasks"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
TERMINAL = ("completed", "failed", "cancelled")
TASK_TOOLS = ("research", "greet", "haiku", "roots", "endless", "doomed", "vanishing",
              "instant")


class TaskParams(RequestParams):
    taskId: str  # noqa: N815 (the wire's name)


class UpdateParams(TaskParams):
    inputResponses: dict[str, Any]  # noqa: N815


def text(said: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": said}], "isError": error}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def name_header(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The request's ``Mcp-Name`` header (over streamable HTTP; None over stdio)."""
    headers = getattr(ctx.request, "headers", None)
    return headers.get("mcp-name") if headers is not None else None


def declared(params: Any) -> bool:
    """The request's ``_meta`` client capabilities declare the tasks extension."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    caps = (meta or {}).get(CAPABILITIES) or {}
    return TASKS in (caps.get("extensions") or {})


class Task:
    """One task: its state, and the steps of its tool."""

    def __init__(self, tool: str, args: dict[str, Any], opts: argparse.Namespace) -> None:
        self.id, self.tool, self.args, self.opts = uuid.uuid4().hex, tool, args, opts
        self.status, self.message = "working", None if tool != "research" else "starting"
        self.created = self.updated = now()
        self.step, self.next_at, self.seen = 0, time.monotonic() + opts.step, False
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.pending: dict[str, Any] = {}  # input requests not yet answered
        self.answers: dict[str, Any] = {}

    def move(self, status: str, message: str | None = None) -> None:
        if self.status in TERMINAL:
            return
        self.status, self.message, self.updated = status, message, now()
        self.seen = False

    def advance(self) -> None:
        """The next step, once the current one was shown and its time is up."""
        if self.status in TERMINAL or not self.seen or time.monotonic() < self.next_at:
            return
        if self.status == "input_required" and self.pending:
            return
        self.step += 1
        self.next_at = time.monotonic() + self.opts.step
        getattr(self, f"step_{self.tool}")()

    def step_research(self) -> None:
        steps = int(self.args.get("steps", 3))
        if self.step <= steps:
            self.move("working", f"step {self.step} of {steps}")
        else:
            self.result = text(f"researched {self.args.get('topic', 'nothing')} in {steps} steps")
            self.move("completed")

    def ask(self, key: str, request: dict[str, Any], message: str) -> None:
        if self.step == 1:
            self.pending[key] = request
            self.move("input_required", message)
        elif self.step == 2:
            self.move("working", "thanks")
        else:
            self.result = text(self.reply(self.answers.get(key) or {}))
            self.move("completed")

    def reply(self, answer: dict[str, Any]) -> str:
        if self.tool == "greet":
            if answer.get("action") != "accept":
                return f"greeting {answer.get('action', 'never answered')}"
            return f"Hello, {(answer.get('content') or {}).get('name')}!"
        if self.tool == "haiku":
            return f"{answer.get('model')} wrote: {(answer.get('content') or {}).get('text')}"
        return ", ".join(r.get("uri", "?") for r in answer.get("roots", [])) or "(none)"

    def step_greet(self) -> None:
        self.ask("name", {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Please enter your name.",
            "requestedSchema": {"type": "object",
                                "properties": {"name": {"type": "string", "default": "Ada"}},
                                "required": ["name"]}}}, "waiting for a name")

    def step_haiku(self) -> None:
        self.ask("poem", {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text",
                                                      "text": "A haiku about owls."}}],
            "maxTokens": 50}}, "waiting for a poem")

    def step_roots(self) -> None:
        self.ask("roots", {"method": "roots/list", "params": {}}, "waiting for roots")

    def step_endless(self) -> None:
        self.move("working", f"still going ({self.step})")

    def step_doomed(self) -> None:
        self.error = {"code": -32603, "message": "API rate limit exceeded"}
        self.move("failed", "Tool execution failed: API rate limit exceeded")

    def shown(self) -> dict[str, Any]:
        """The task as ``tasks/get`` (and ``notifications/tasks``) say it: DetailedTask."""
        out: dict[str, Any] = {"taskId": self.id, "status": self.status,
                               "createdAt": self.created, "lastUpdatedAt": self.updated,
                               "ttlMs": 600_000, "pollIntervalMs": self.opts.poll_ms}
        if self.message is not None:
            out["statusMessage"] = self.message
        if self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        elif self.status == "input_required":
            out["inputRequests"] = dict(self.pending)
        return out


class Tasks(Extension):
    identifier = TASKS

    def __init__(self, opts: argparse.Namespace) -> None:
        self.opts = opts
        self.tasks: dict[str, Task] = {}

    def mark(self, method: str, **more: Any) -> None:
        if self.opts.marks:
            with open(self.opts.marks, "a", encoding="utf-8") as f:
                f.write(json.dumps({"t": time.monotonic(), "method": method, **more}) + "\n")

    def the(self, params: TaskParams) -> Task:
        task = self.tasks.get(params.taskId)
        if task is None:
            raise MCPError(-32602, "Failed to retrieve task: Task has expired")
        return task

    async def intercept_tool_call(self, params: CallToolRequestParams,
                                  ctx: ServerRequestContext[Any, Any],
                                  call_next: CallNext) -> HandlerResult:
        opted = declared(ctx.params)
        self.mark("tools/call", tool=params.name, declared=opted)
        if params.name not in TASK_TOOLS:
            return await call_next(ctx)
        if not opted:
            raise MCPError(-32021, "Missing required client capability",
                           {"requiredCapabilities": {"extensions": {TASKS: {}}}})
        task = Task(params.name, dict(params.arguments or {}), self.opts)
        if params.name != "vanishing":
            self.tasks[task.id] = task
        if params.name == "instant":  # a task born completed
            task.result = text("done at once")
            task.move("completed")
        task.seen = True  # the answer shows it
        return {"resultType": "task", **task.shown()}

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams
                  ) -> dict[str, Any]:
        task = self.the(params)
        task.advance()
        shown = task.shown()
        task.seen = True
        self.mark("tasks/get", task=task.id, declared=declared(ctx.params),
                  status=task.status, keys=sorted(task.pending), name=name_header(ctx))
        return {"resultType": "complete", **shown}  # the 2026-07-28 result's own mark

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams
                     ) -> dict[str, Any]:
        task = self.the(params)
        self.mark("tasks/update", task=task.id, keys=sorted(params.inputResponses),
                  declared=declared(ctx.params))
        for key, answer in params.inputResponses.items():
            if key in task.pending:  # others are ignored, as the extension says
                del task.pending[key]
                task.answers[key] = answer
        return {"resultType": "complete"}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams
                     ) -> dict[str, Any]:
        task = self.the(params)
        self.mark("tasks/cancel", task=task.id, declared=declared(ctx.params))
        task.move("cancelled", "cancelled at the client's request")
        return {"resultType": "complete"}

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self.get),
                MethodBinding("tasks/update", UpdateParams, self.update),
                MethodBinding("tasks/cancel", TaskParams, self.cancel)]

    async def listen(self, ctx: ServerRequestContext[Any, Any],
                     params: SubscriptionsListenRequestParams) -> dict[str, Any]:
        """``subscriptions/listen`` with ``taskIds``: acknowledged, then a
        ``notifications/tasks`` each time one of the tasks changes, until it ends."""
        wanted = [t for t in (params.notifications.model_extra or {}).get("taskIds") or []
                  if t in self.tasks]
        self.mark("subscriptions/listen", tasks=wanted, declared=declared(ctx.params))
        meta = {SUBSCRIPTION: ctx.request_id}
        await notify(ctx, "notifications/subscriptions/acknowledged",
                     {"notifications": {"taskIds": wanted}, "_meta": meta})
        sent: dict[str, str] = {}
        while any(self.tasks[t].status not in TERMINAL or t not in sent for t in wanted):
            for task in (self.tasks[t] for t in wanted):
                task.advance()
                shown = task.shown()
                if json.dumps(shown, sort_keys=True) != sent.get(task.id):
                    sent[task.id] = json.dumps(shown, sort_keys=True)
                    task.seen = True
                    self.mark("notifications/tasks", task=task.id, status=task.status)
                    await notify(ctx, "notifications/tasks", {**shown, "_meta": meta})
            await anyio.sleep(0.05)
        return {"_meta": meta}


async def notify(ctx: ServerRequestContext[Any, Any], method: str,
                 params: dict[str, Any]) -> None:
    """A notification on the request's own stream (the SDK's session sends any model
    with a method and params; the extension's are not in its vocabulary)."""
    from pydantic import BaseModel

    class Note(BaseModel):
        method: str
        params: dict[str, Any]

    await ctx.session.send_notification(Note(method=method, params=params),  # type: ignore[arg-type]
                                        related_request_id=ctx.request_id)


async def task_only(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """``--execution``: ``research`` says it runs only as a task (``execution.taskSupport``,
    a 2025-11-25 field a server may still send; the SDK's 2026 sieve would drop it, so it
    is added to the listing on its way out)."""
    result = await call_next(ctx)
    if ctx.method == "tools/list" and isinstance(result, dict):
        for tool in result.get("tools", []):
            if tool.get("name") == "research":
                tool["execution"] = {"taskSupport": "required"}
    return result


def build(opts: argparse.Namespace) -> MCPServer:
    tasks = Tasks(opts)
    server = MCPServer("ext-tasks", version="1.0",
                       extensions=[] if opts.no_extension else [tasks],
                       subscriptions=False if opts.notify else None,
                       middleware=[task_only] if opts.execution else None)
    if opts.notify:
        server._lowlevel_server.add_request_handler(  # the SDK's own listen knows no taskIds
            "subscriptions/listen", SubscriptionsListenRequestParams, tasks.listen)

    def task_tool(name: str, description: str) -> None:
        @server.tool(name=name, description=description, structured_output=False)
        def run(topic: str = "", steps: int = 3) -> str:
            return f"{name} ran without a task"  # reached only past the extension

    task_tool("research", "Research a topic in steps.")
    for name in TASK_TOOLS[1:]:
        task_tool(name, f"The {name} task.")

    @server.tool(description="Answers at once.", structured_output=False)
    def direct(topic: str = "") -> str:
        return f"direct answer about {topic}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--poll-ms", type=int, default=100)
    parser.add_argument("--step", type=float, default=0.2)
    parser.add_argument("--notify", action="store_true")
    parser.add_argument("--marks")
    parser.add_argument("--execution", action="store_true")
    parser.add_argument("--no-extension", action="store_true")
    opts = parser.parse_args()
    server = build(opts)
    if opts.transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
