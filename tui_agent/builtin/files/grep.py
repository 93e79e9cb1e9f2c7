"""``grep {pattern, path, glob, context}``: lines matching a regular expression under a
folder (or in one file), as ``path:line:text`` with context lines as ``path-line-text`` and
``--`` between groups, files in path order. ripgrep does the search when ``rg`` is on the
PATH (:mod:`.ripgrep`, its ``--json`` output is formatted here); otherwise a Python walk
does (:mod:`.walk`), with the same output. Both are bounded (:mod:`.found`): they stop at
:data:`~.found.MOST_LINES` lines or :data:`~.found.TIMEOUT` seconds and say so; neither
shows a file in a place that holds secrets."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from tui_agent.builtin import roots
from tui_agent.builtin.files.found import MOST_LINES, Hits
from tui_agent.builtin.files.guard import in_thread
from tui_agent.builtin.files.ripgrep import ripgrep
from tui_agent.builtin.files.walk import walk
from tui_agent.builtin.workspace import Refused, Workspace

LONGEST = 500
"""Characters of one line shown."""

DESCRIPTION = (
    "Search file contents with a regular expression (ripgrep syntax). path: a folder or a "
    "file (default the working directory); glob: only files whose names match (e.g. *.py "
    "or src/**/*.ts); context: lines shown before and after each match. Output: "
    "path:line:text, context lines as path-line-text. Hidden and binary files are skipped.")


def register(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="grep", description=DESCRIPTION,
                 annotations=ToolAnnotations(title="Search file contents",
                                             read_only_hint=True, open_world_hint=False))
    async def grep(pattern: str, ctx: Context[Any, Any], path: str = ".",
                   glob: str | None = None, context: int = 0) -> str:
        await roots.current(ctx, workspace)
        return await in_thread(
            lambda: search(workspace, pattern, workspace.resolve(path), glob, context))


def search(workspace: Workspace, pattern: str, where: Path, glob: str | None,
           context: int = 0, *, use_rg: bool | None = None) -> str:
    """The answer of ``grep``; ``use_rg``: force ripgrep or the fallback (default: ripgrep
    when installed)."""
    if not pattern:
        raise Refused("the pattern is empty: give a regular expression")
    if not 0 <= context <= 50:
        raise Refused(f"context is {context}: give 0 to 50 lines")
    if not where.exists():
        raise Refused(f"{workspace.shown(where)} does not exist")
    rg = shutil.which("rg") if use_rg is not False else None
    if use_rg and rg is None:
        raise Refused("ripgrep (rg) is not installed")
    hits = ripgrep(workspace, rg, pattern, where, glob, context) if rg else \
        walk(workspace, pattern, where, glob, context)
    return _format(workspace, hits, pattern, context)


def _format(workspace: Workspace, hits: Hits, pattern: str, context: int) -> str:
    found = hits.files
    notes = [f"({note})" for note in hits.notes]
    if not found:
        return "\n".join([f"no matches for {pattern}", *notes])
    out: list[str] = []
    shown_lines = 0
    for file in sorted(found):
        name = workspace.shown(Path(os.path.realpath(file)))
        last = None
        for number in sorted(found[file].lines):
            if shown_lines >= MOST_LINES:
                break
            hit, text = found[file].lines[number]
            if context and last is not None and number != last + 1:
                out.append("--")
            if len(text) > LONGEST:
                text = text[:LONGEST] + " [line cut]"
            out.append(f"{name}{':' if hit else '-'}{number}{':' if hit else '-'}{text}")
            shown_lines += 1
            last = number
    if hits.more:
        out.append(f"(cut at {MOST_LINES} lines: more lines match; narrow the pattern, path "
                   "or glob)")
    return "\n".join([*out, *notes])
