"""Which tools can be offered and how their calls go, given the server's tasks: the
2025-11-25 core form (a tool's ``execution.taskSupport``, the server's
``tasks.requests.tools.call``) or the 2026-07-28 extension (``io.modelcontextprotocol/tasks``
in the server's ``capabilities.extensions``, where the server decides per call)."""

from __future__ import annotations

from typing import Any

from tui_agent.tools.text import clean

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier (SEP-2663), in the capabilities of both sides."""


def task_support(tool: Any) -> str | None:
    """The tool's ``execution.taskSupport`` (None: absent, which means forbidden)."""
    return getattr(getattr(tool, "execution", None), "task_support", None)


def is_legacy(protocol: str | None) -> bool:
    return str(protocol or "").startswith("2025")


def server_runs_tasks(client: Any) -> bool:
    """The server takes tool calls as tasks: in 2025-11-25 it declares task-augmented
    ``tools/call``; in 2026-07-28 it offers the tasks extension."""
    if client is None:
        return False
    if not is_legacy(client.protocol_version):
        return server_offers_extension(client)
    tasks = getattr(client.server_capabilities, "tasks", None)
    tools = getattr(getattr(tasks, "requests", None), "tools", None)
    return getattr(tools, "call", None) is not None


def server_offers_extension(client: Any) -> bool:
    """The server's capabilities name the tasks extension (2026-07-28)."""
    extensions = getattr(client.server_capabilities, "extensions", None) or {}
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def runs_as_task(tool: Any, client: Any) -> bool:
    """A call of ``tool`` goes in the 2025-11-25 form, with a ``task`` param: the tool
    may or must, and the server takes tasks in that protocol. (In 2026-07-28 every call
    carries the extension and the server decides: :mod:`.extension`.)"""
    return (task_support(tool) in ("required", "optional") and client is not None
            and is_legacy(client.protocol_version) and server_runs_tasks(client))


def why_not_offered(tool: Any, protocol: str | None, takes_tasks: bool) -> str | None:
    """Why ``tool`` cannot be offered, or None: a tool that runs only as a task, on a
    server that does not take task calls (``takes_tasks``, as it said when it last
    connected), would fail every call."""
    if task_support(tool) != "required" or takes_tasks:
        return None
    if protocol is not None and not is_legacy(protocol):
        return (f"it runs only as a task, and the server does not offer the tasks "
                f"extension ({TASKS_EXTENSION}) in protocol {clean(protocol)}")
    return "it runs only as a task, and the server does not declare task-augmented tools/call"


def missing_capability(server: str, tool: str, error: Any, protocol: str | None) -> str:
    """The words for ``-32021`` (Missing Required Client Capability) in answer to the call
    of ``tool``: what the server needs (``error.data.requiredCapabilities``), and, for the
    tasks extension, why it was not declared and what to do."""
    required = getattr(error, "data", None)
    required = required.get("requiredCapabilities") if isinstance(required, dict) else None
    needs = _needs(required if isinstance(required, dict) else {})
    theirs = clean(str(getattr(error, "message", "") or ""))[:300]
    if TASKS_EXTENSION in needs and (protocol is None or is_legacy(protocol)):
        return (f"server '{server}' runs {tool} only as a task of the MCP tasks extension "
                f"({TASKS_EXTENSION}), which tui-agent declares only in protocol 2026-07-28, "
                f"and this connection speaks {clean(protocol or 'an older protocol')}: set "
                f"protocol = \"2026-07-28\" (or \"auto\") for the server (MCP error -32021)")
    if TASKS_EXTENSION in needs:
        return (f"server '{server}' refused the call of {tool} for want of the MCP tasks "
                f"extension ({TASKS_EXTENSION}), which tui-agent declared with the call: "
                f"{theirs} (MCP error -32021)")
    what = ", ".join(needs) or "a capability it did not name"
    return (f"server '{server}' refused the call of {tool}: it needs a client capability "
            f"tui-agent did not declare for the call ({what}): {theirs} (MCP error -32021)")


def _needs(required: dict[str, Any]) -> list[str]:
    """The capabilities a ``requiredCapabilities`` names: extensions by their identifier,
    the others by their key (cleaned: the server's words)."""
    needs: list[str] = []
    for key, value in required.items():
        if key == "extensions" and isinstance(value, dict):
            needs.extend(clean(str(name))[:100] for name in value)
        else:
            needs.append(clean(str(key))[:100])
    return needs[:10]
