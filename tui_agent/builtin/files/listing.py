"""``list {path}``: a folder's entries, folders first, each with its kind (``/`` a folder,
``@`` a symlink, with where it leads) and a file's size. Hidden entries are listed too."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from tui_agent.builtin import roots
from tui_agent.builtin.files.guard import in_thread, open_folder, size_text
from tui_agent.builtin.workspace import Refused, Workspace

MOST = 1000
"""Entries one call lists; the count of the rest is given."""


def register(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="list",
                 description="List a folder's entries: folders first (ending in /), then "
                             "files with their sizes; symlinks show where they lead. "
                             "path defaults to the working directory.",
                 annotations=ToolAnnotations(title="List a folder", read_only_hint=True,
                                             open_world_hint=False))
    async def list_(ctx: Context[Any, Any], path: str = ".") -> str:
        await roots.current(ctx, workspace)
        return await in_thread(lambda: list_folder(workspace, workspace.resolve(path)))


def list_folder(workspace: Workspace, folder: Path) -> str:
    """What ``list`` answers for the resolved ``folder``: read through a descriptor checked
    to be it (:func:`open_folder`); an entry that is a secret place (``~/.ssh`` when the
    folder is the home) is left out."""
    shown = workspace.shown(folder)
    if not folder.is_dir():
        raise Refused(f"{shown} is not a folder" if folder.exists()
                      else f"{shown} does not exist")
    fd = open_folder(workspace, folder)
    try:
        with os.scandir(fd) as found:
            rows = sorted((_row(e, fd) for e in found
                           if workspace.secret(folder / e.name) is None),
                          key=lambda r: (not r[0], r[1].lower()))
    except OSError as exc:
        raise Refused(f"{shown} cannot be listed: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    lines = [text for _, _, text in rows[:MOST]]
    if len(rows) > MOST:
        lines.append(f"... and {len(rows) - MOST} more entries")
    header = f"{shown}: {len(rows)} entries" if rows else f"{shown} is empty"
    return "\n".join([header, *lines])


def _row(entry: os.DirEntry[str], folder: int) -> tuple[bool, str, str]:
    """(is a folder, name, the line shown)."""
    name = entry.name
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False, name, f"{name} (unreadable)"
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(entry.name, dir_fd=folder)
        except OSError:
            target = "?"
        folder = entry.is_dir()
        return folder, name, f"{name}{'/' if folder else ''}@ -> {target}"
    if stat.S_ISDIR(info.st_mode):
        return True, name, f"{name}/"
    if stat.S_ISREG(info.st_mode):
        return False, name, f"{name}  {size_text(info.st_size)}"
    return False, name, f"{name}  (special file)"
