"""``edit {path, old_string, new_string, replace_all}``: an exact string replacement in a
text file. ``old_string`` must occur once, or ``replace_all`` must be set; a string that is
not there, or there several times without ``replace_all``, is an error naming the count,
and the file is left as it was. The write hook runs just before the file changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from tui_agent.builtin import roots
from tui_agent.builtin.files.guard import in_thread, replace_file, whole_text, with_note
from tui_agent.builtin.workspace import Refused, Workspace

DESCRIPTION = (
    "Edit a text file by exact string replacement: old_string (copied exactly from the "
    "file, indentation included) becomes new_string. old_string must occur exactly once "
    "unless replace_all is true; add surrounding lines to make it unique. Read the file "
    "first. To create a file use write.")


def register(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="edit", description=DESCRIPTION,
                 annotations=ToolAnnotations(title="Edit a file", read_only_hint=False,
                                             destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    async def edit(path: str, old_string: str, new_string: str, ctx: Context[Any, Any],
                   replace_all: bool = False) -> str:
        await roots.current(ctx, workspace)
        return await in_thread(lambda: edit_file(
            workspace, workspace.resolve(path), old_string, new_string, replace_all), changes=True)


def edit_file(workspace: Workspace, path: Path, old: str, new: str,
              replace_all: bool = False) -> str:
    """What ``edit`` does to the resolved ``path``, and its answer."""
    shown = workspace.shown(path)
    if not old:
        raise Refused("old_string is empty: copy the text to replace from the file (to "
                      "create a file or replace all of it, use write)")
    if old == new:
        raise Refused("old_string and new_string are the same: nothing would change")
    text = whole_text(workspace, path)
    count = text.count(old)
    if count == 0:
        raise Refused(f"old_string is not in {shown}: read the file and copy the text "
                      "exactly (whitespace and indentation included)")
    if count > 1 and not replace_all:
        raise Refused(f"old_string occurs {count} times in {shown}: add surrounding lines "
                      "to make it unique, or set replace_all to replace every one")
    said = replace_file(workspace, path, text.replace(old, new) if replace_all
                        else text.replace(old, new, 1))
    line = text[:text.index(old)].count("\n") + 1
    what = f"{count} replacements" if replace_all and count > 1 else f"1 replacement at line {line}"
    return with_note(f"edited {shown}: {what}", said)
