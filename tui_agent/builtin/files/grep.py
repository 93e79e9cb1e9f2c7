"""``grep {pattern, path, glob, context}``: lines matching a regular expression under a
folder (or in one file), as ``path:line:text`` with context lines as ``path-line-text`` and
``--`` between groups, files in path order. ripgrep does the search when ``rg`` is on the
PATH (its ``--json`` output is formatted here); otherwise a Python walk does, with the same
output: hidden files and folders, symlinks and binary files skipped as ripgrep skips them
(but ``.gitignore`` is read by ripgrep only)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from tui_agent.builtin import roots
from tui_agent.builtin.files.guard import SNIFF, is_binary
from tui_agent.builtin.workspace import Refused, Workspace

MOST_LINES = 500
"""Lines (matches and context) one call shows; the rest are counted."""
LONGEST = 500
"""Characters of one line shown."""
TIMEOUT = 60.0
"""Seconds a search may take."""

DESCRIPTION = (
    "Search file contents with a regular expression (ripgrep syntax). path: a folder or a "
    "file (default the working directory); glob: only files whose names match (e.g. *.py "
    "or src/**/*.ts); context: lines shown before and after each match. Output: "
    "path:line:text, context lines as path-line-text. Hidden and binary files are skipped.")


@dataclass
class Found:
    """The lines found in one file: number -> (is a match, text)."""

    lines: dict[int, tuple[bool, str]] = field(default_factory=dict)


def register(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="grep", description=DESCRIPTION,
                 annotations=ToolAnnotations(title="Search file contents",
                                             read_only_hint=True, open_world_hint=False))
    async def grep(pattern: str, ctx: Context[Any, Any], path: str = ".",
                   glob: str | None = None, context: int = 0) -> str:
        await roots.current(ctx, workspace)
        where = workspace.resolve(path)
        return await anyio.to_thread.run_sync(
            lambda: search(workspace, pattern, where, glob, context), abandon_on_cancel=True)


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
    found = _ripgrep(rg, pattern, where, glob, context) if rg else \
        _python(pattern, where, glob, context)
    return _format(workspace, found, pattern, context)


def _ripgrep(rg: str, pattern: str, where: Path, glob: str | None,
             context: int) -> dict[Path, Found]:
    command = [rg, "--json", "--no-config", "-e", pattern]
    if glob:
        command += ["-g", glob]
    if context:
        command += ["-C", str(context)]
    try:
        done = subprocess.run([*command, "--", str(where)], capture_output=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise Refused(f"the search took over {TIMEOUT:.0f} s: narrow path or glob") from None
    if done.returncode == 2 and not done.stdout:
        said = done.stderr.decode("utf-8", "replace").strip()
        raise Refused(f"ripgrep refused the search: {said}")
    found: dict[Path, Found] = {}
    for raw in done.stdout.splitlines():
        event = json.loads(raw)
        if event["type"] not in ("match", "context"):
            continue
        data = event["data"]
        text = data["lines"].get("text")
        if text is None:  # not UTF-8: ripgrep gives it as bytes
            continue
        file = Path(data["path"]["text"])
        found.setdefault(file, Found()).lines[data["line_number"]] = (
            event["type"] == "match", text.rstrip("\r\n"))
    return found


def _python(pattern: str, where: Path, glob: str | None, context: int) -> dict[Path, Found]:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise Refused(f"the pattern {pattern!r} is not a regular expression: {exc}") from None
    found: dict[Path, Found] = {}
    for file in _files(where, glob):
        hits = _in_file(regex, file, context)
        if hits is not None:
            found[file] = hits
    return found


def _files(where: Path, glob: str | None) -> Iterator[Path]:
    if where.is_file():
        yield where
        return
    for folder, dirs, files in os.walk(where):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            file = Path(folder, name)
            if name.startswith(".") or file.is_symlink():
                continue
            if glob and not _glob_matches(glob, file.relative_to(where)):
                continue
            yield file


def _glob_matches(glob: str, relative: Path) -> bool:
    """As ripgrep's ``-g``: a glob without ``/`` matches the name, else the path."""
    if "/" not in glob:
        return fnmatch.fnmatchcase(relative.name, glob)
    return fnmatch.fnmatchcase(str(relative), glob.removeprefix("/")) or \
        fnmatch.fnmatchcase(str(relative), glob.replace("**/", ""))


def _in_file(regex: re.Pattern[str], file: Path, context: int) -> Found | None:
    try:
        with open(file, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if is_binary(data[:SNIFF]):
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    hits = Found()
    for number, line in enumerate(lines, 1):
        if regex.search(line):
            for near in range(max(1, number - context), min(len(lines), number + context) + 1):
                if near not in hits.lines or near == number:
                    hits.lines[near] = (near == number or hits.lines.get(near, (False,))[0],
                                        lines[near - 1])
    return hits if hits.lines else None


def _format(workspace: Workspace, found: dict[Path, Found], pattern: str,
            context: int) -> str:
    if not found:
        return f"no matches for {pattern}"
    out: list[str] = []
    shown_lines = 0
    matches = sum(sum(1 for hit, _ in f.lines.values() if hit) for f in found.values())
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
    if shown_lines >= MOST_LINES:
        out.append(f"(cut at {MOST_LINES} lines; {matches} matching lines in {len(found)} "
                   "files: narrow the pattern, path or glob)")
    return "\n".join(out)
