"""An MCP server over stdio, in plain Python, whose tools run as tasks (MCP 2025-11-25,
SEP-1686): the SDK has no server side for tasks, so this one speaks the JSON-RPC itself.
It declares ``tasks.requests.tools.call`` (unless ``--no-tasks``) and serves

- ``research`` (task required): works ``steps`` steps of ``--step`` seconds, reporting
  progress on the call's token and a status message per step, then answers;
- ``doomed`` (required): fails after its first step (status ``failed``, an error result);
- ``endless`` (required): works until it is cancelled;
- ``quick`` (optional): answers at once, saying whether it ran as a task;
- ``plain``: an ordinary tool.

Every ``tools/call``, ``tasks/get``, ``tasks/result`` and ``tasks/cancel`` is written to
``--marks FILE`` (one JSON line: time, method, task, tool) for the tests to read.

``--step-until-seen``: a step's work starts only once a ``tasks/get`` has answered with its
status (at most 60 s later), so a test sees every status however late the polls come on a
busy machine (they come at the server's pollInterval, which a step may outlast or not).

    python tests/fakes/task_server.py [--poll-ms N] [--step S] [--step-until-seen]
                                      [--marks FILE] [--no-tasks]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from typing import Any

WRITE = threading.Lock()
TASKS: dict[str, dict[str, Any]] = {}
CHANGED = threading.Condition()
TERMINAL = ("completed", "failed", "cancelled")


def tool(name: str, description: str, support: str | None,
         properties: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": description,
                           "inputSchema": {"type": "object", "properties": properties or {}}}
    if support is not None:
        out["execution"] = {"taskSupport": support}
    return out


TOOLS = [
    tool("research", "Research a topic in steps.", "required",
         {"topic": {"type": "string"}, "steps": {"type": "integer"}}),
    tool("doomed", "A task that fails.", "required"),
    tool("endless", "A task that never ends by itself.", "required"),
    tool("quick", "Answers at once; may run as a task.", "optional"),
    tool("plain", "An ordinary tool.", None),
]


def send(message: dict[str, Any]) -> None:
    with WRITE:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def mark(opts: argparse.Namespace, method: str, **more: Any) -> None:
    if opts.marks:
        with WRITE, open(opts.marks, "a", encoding="utf-8") as f:
            f.write(json.dumps({"t": time.monotonic(), "method": method, **more}) + "\n")


def text(said: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": said}], "isError": error}


def snapshot(task: dict[str, Any]) -> dict[str, Any]:
    return {k: task[k] for k in ("taskId", "status", "statusMessage", "createdAt",
                                 "lastUpdatedAt", "ttl", "pollInterval")}


def update(task: dict[str, Any], status: str, message: str | None) -> bool:
    """Move ``task`` on unless it already ended (a cancel wins); False if it had."""
    with CHANGED:
        if task["status"] in TERMINAL:
            return False
        task.update(status=status, statusMessage=message,
                    lastUpdatedAt=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        CHANGED.notify_all()
        return True


def work(opts: argparse.Namespace, task: dict[str, Any], name: str, args: dict[str, Any],
         token: Any) -> None:
    """The task's own thread: what the tool does, step by step."""
    steps = int(args.get("steps", 3)) if name == "research" else 10**6
    for step in range(1, steps + 1):
        if not update(task, "working", f"step {step} of {steps}" if name == "research"
                      else "still going"):
            return
        if token is not None and name == "research":
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": step, "total": steps,
                             "message": f"step {step}"}})
        if opts.step_until_seen:
            with CHANGED:
                CHANGED.wait_for(lambda: task.get("seen") == task["statusMessage"], 60)
        time.sleep(opts.step)
        if name == "doomed":
            task["result"] = text("the index is gone", error=True)
            update(task, "failed", "the index is gone")
            return
    task["result"] = text(f"researched {args.get('topic', 'nothing')} in {steps} steps")
    update(task, "completed", None)


def create(opts: argparse.Namespace, name: str, args: dict[str, Any],
           params: dict[str, Any]) -> dict[str, Any]:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    task = {"taskId": uuid.uuid4().hex, "status": "working", "statusMessage": None,
            "createdAt": now, "lastUpdatedAt": now,
            "ttl": params["task"].get("ttl"), "pollInterval": opts.poll_ms}
    TASKS[task["taskId"]] = task
    if name == "quick":
        task["result"] = text("quick, as a task")
        update(task, "completed", None)
    else:
        token = (params.get("_meta") or {}).get("progressToken")
        threading.Thread(target=work, args=(opts, task, name, args, token),
                         daemon=True).start()
    return {"task": snapshot(task)}


def call(opts: argparse.Namespace, params: dict[str, Any]) -> dict[str, Any]:
    name, args = params.get("name"), params.get("arguments") or {}
    listed = next((t for t in TOOLS if t["name"] == name), None)
    if listed is None:
        raise Failure(-32602, f"no tool {name}")
    support = listed.get("execution", {}).get("taskSupport")
    as_task = "task" in params and not opts.no_tasks
    mark(opts, "tools/call", tool=name, task=as_task)
    if as_task and support in ("required", "optional"):
        return create(opts, str(name), args, params)
    if support == "required":
        raise Failure(-32601, f"{name} runs only as a task")
    return text(f"{name} without a task")


class Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def the_task(params: dict[str, Any]) -> dict[str, Any]:
    task = TASKS.get(str(params.get("taskId")))
    if task is None:
        raise Failure(-32602, "Failed to retrieve task: Task not found")
    return task


def on_tasks(opts: argparse.Namespace, method: str, params: dict[str, Any]) -> dict[str, Any]:
    task = the_task(params)
    mark(opts, method, task=task["taskId"])
    if method == "tasks/get":
        with CHANGED:
            shown = snapshot(task)
            task["seen"] = shown["statusMessage"]
            CHANGED.notify_all()
        return shown
    if method == "tasks/cancel":
        if not update(task, "cancelled", "cancelled at the client's request"):
            raise Failure(-32602, "the task already ended")
        return snapshot(task)
    with CHANGED:  # tasks/result waits for the end
        CHANGED.wait_for(lambda: task["status"] in TERMINAL)
    if task["status"] == "cancelled":
        raise Failure(-32000, "Task cancelled")
    result = dict(task["result"])
    result["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": task["taskId"]}}
    return result


def answer(opts: argparse.Namespace, request: dict[str, Any]) -> None:
    method, rid, params = request.get("method"), request.get("id"), request.get("params") or {}
    try:
        if method == "initialize":
            caps: dict[str, Any] = {"tools": {}}
            if not opts.no_tasks:
                caps["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
            result: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": caps,
                                      "serverInfo": {"name": "tasks", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            result = call(opts, params)
        elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
            result = on_tasks(opts, str(method), params)
        elif method == "ping":
            result = {}
        else:
            raise Failure(-32601, "Method not found")
    except Failure as failure:
        send({"jsonrpc": "2.0", "id": rid,
              "error": {"code": failure.code, "message": failure.message}})
        return
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll-ms", type=int, default=200)
    parser.add_argument("--step", type=float, default=0.2)
    parser.add_argument("--step-until-seen", action="store_true")
    parser.add_argument("--marks")
    parser.add_argument("--no-tasks", action="store_true")
    opts = parser.parse_args()
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("id") is None:
            continue  # a notification
        threading.Thread(target=answer, args=(opts, request), daemon=True).start()


if __name__ == "__main__":
    main()
