"""``glob {pattern, path}``: the files under a folder whose paths match a glob (``**`` for
any depth), newest first as Claude Code lists them. Hidden folders are searched only when
the pattern names them; every match is inside the roots (a symlink out is dropped) and in
no place that holds secrets (``.ssh/*`` over the home finds nothing)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from tui_agent.builtin import roots
from tui_agent.builtin.files.guard import in_thread
from tui_agent.builtin.workspace import Refused, Workspace

MOST = 1000
"""Paths one call returns; the count of the rest is given."""


def register(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="glob",
                 description="Find files by name: a glob pattern such as **/*.py or "
                             "src/*.ts (** matches any depth), under path (default the "
                             "working directory). Newest first.",
                 annotations=ToolAnnotations(title="Find files", read_only_hint=True,
                                             open_world_hint=False))
    async def glob(pattern: str, ctx: Context[Any, Any], path: str = ".") -> str:
        await roots.current(ctx, workspace)
        return await in_thread(lambda: find(workspace, pattern, workspace.resolve(path)))


def find(workspace: Workspace, pattern: str, folder: Path) -> str:
    if not pattern.strip():
        raise Refused("the pattern is empty: give a glob such as **/*.py")
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise Refused(f"the pattern {pattern} must be relative to path (no leading / and no "
                      "..): give the folder as path")
    if not folder.is_dir():
        raise Refused(f"{workspace.shown(folder)} is not a folder")
    found: list[tuple[float, Path]] = []
    hidden_ok = any(part.startswith(".") for part in Path(pattern).parts)
    for match in folder.glob(pattern):
        relative = match.relative_to(folder).parts
        if not hidden_ok and any(p.startswith(".") for p in relative):
            continue
        real = Path(os.path.realpath(match))
        if not match.is_file() or not workspace.allowed(real):
            continue
        try:
            found.append((match.stat().st_mtime, match))
        except OSError:
            continue
    if not found:
        return f"no files match {pattern} under {workspace.shown(folder)}"
    found.sort(key=lambda item: (-item[0], str(item[1])))
    lines = [workspace.shown(path) for _, path in found[:MOST]]
    if len(found) > MOST:
        lines.append(f"... and {len(found) - MOST} more")
    return "\n".join(lines)
