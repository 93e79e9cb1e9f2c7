"""``write {path, content}``: a file's whole content, created (with its folders) or
replaced. The write hook runs just before the file changes; a folder, a FIFO or a device
at the path is refused."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from tui_agent.builtin import roots
from tui_agent.builtin.files.guard import in_thread, replace_file, with_note
from tui_agent.builtin.workspace import Workspace


def register(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="write",
                 description="Write a file: content becomes its whole text (the file and "
                             "its folders are created if missing; an existing file is "
                             "replaced, so read it first). For a change inside a file use "
                             "edit.",
                 annotations=ToolAnnotations(title="Write a file", read_only_hint=False,
                                             destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False))
    async def write(path: str, content: str, ctx: Context[Any, Any]) -> str:
        await roots.current(ctx, workspace)
        return await in_thread(
            lambda: write_file(workspace, workspace.resolve(path), content), changes=True)


def write_file(workspace: Workspace, path: Path, content: str) -> str:
    """What ``write`` does to the resolved ``path``, and its answer."""
    shown = workspace.shown(path)
    existed = os.path.lexists(path)
    said = replace_file(workspace, path, content)  # never a folder, a FIFO or a device
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return with_note(f"{'replaced' if existed else 'created'} {shown} ({lines} lines)", said)
