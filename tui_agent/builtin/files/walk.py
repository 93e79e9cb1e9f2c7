"""grep's fallback engine, a Python walk (a fresh install without ripgrep), bounded as rg
is: only regular files are opened (``lstat`` first, then opened without blocking or
following a symlink, and checked again on the descriptor: a FIFO or a device is skipped,
never waited on), at most :data:`MOST_BYTES` of each is searched (a note names a file cut
short), the walk stops at :data:`~.found.TIMEOUT` with what it found and a note, and once
more lines than one answer shows are found. Hidden files and folders, symlinks, binary
files and the places that hold secrets are skipped, as ripgrep skips the first four
(``.gitignore`` is read by ripgrep only). One ``re`` search of one line cannot be
interrupted: a catastrophic pattern on a long line runs until it ends."""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from tui_agent.builtin.files.found import TIMEOUT, Found, Hits
from tui_agent.builtin.files.guard import READING, SNIFF, is_binary, size_text
from tui_agent.builtin.workspace import Refused, Workspace, opened_path

MOST_BYTES = 16 * 1024 * 1024
"""Bytes of one file searched; the rest is not, and the answer says so."""


def walk(workspace: Workspace, pattern: str, where: Path, glob: str | None,
         context: int) -> Hits:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise Refused(f"the pattern {pattern!r} is not a regular expression: {exc}") from None
    hits = Hits()
    deadline = time.monotonic() + TIMEOUT
    cut: list[str] = []
    for file in _files(workspace, where, glob):
        if time.monotonic() > deadline:
            hits.notes.append(f"the search stopped after {TIMEOUT:.0f} s: these are the "
                              "lines found by then; narrow path or glob")
            break
        found = _in_file(workspace, regex, file, context, cut)
        if found is not None:
            hits.files[file] = found
            if hits.full():
                break
    if cut:
        shown = ", ".join(workspace.shown(Path(c)) for c in cut[:5])
        more = f" and {len(cut) - 5} more" if len(cut) > 5 else ""
        hits.notes.append(f"only the first {size_text(MOST_BYTES)} of {shown}{more} "
                          "searched")
    return hits


def _files(workspace: Workspace, where: Path, glob: str | None) -> Iterator[Path]:
    if not where.is_dir():
        yield where
        return
    # ``where`` is resolved and in no secret place, and the walk follows no symlink, so a
    # folder or file is in one only if it is one: a set lookup, not a path test per file
    secret = {str(place) for place in workspace.secrets}
    for folder, dirs, files in os.walk(where):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and os.path.join(folder, d) not in secret)
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.startswith(".") or path in secret:
                continue
            file = Path(path)
            if glob and not _glob_matches(glob, file.relative_to(where)):
                continue
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue  # a symlink, a FIFO, a device: never opened
            except OSError:
                continue
            yield file


def _glob_matches(glob: str, relative: Path) -> bool:
    """As ripgrep's ``-g``: a glob without ``/`` matches the name, else the path."""
    if "/" not in glob:
        return fnmatch.fnmatchcase(relative.name, glob)
    return fnmatch.fnmatchcase(str(relative), glob.removeprefix("/")) or \
        fnmatch.fnmatchcase(str(relative), glob.replace("**/", ""))


def _read(workspace: Workspace, file: Path) -> tuple[bytes, bool] | None:
    """The first :data:`MOST_BYTES` of a regular ``file`` that is where it was found,
    and whether there is more; None for anything else."""
    try:
        fd = os.open(file, READING)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _still(workspace, fd, file):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            # as much as the file holds, not a 16 MB buffer per file
            data = f.read(min(info.st_size, MOST_BYTES) + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data[:MOST_BYTES], len(data) > MOST_BYTES or info.st_size > MOST_BYTES


def _still(workspace: Workspace, fd: int, file: Path) -> bool:
    """The descriptor is ``file`` (a folder on the way was not swapped), or allowed."""
    try:
        if os.readlink(f"/proc/self/fd/{fd}") == str(file):  # the usual case, cheaply
            return True
    except OSError:
        pass
    real = opened_path(fd)
    return real is None or real == file or workspace.allowed(real)


def _in_file(workspace: Workspace, regex: re.Pattern[str], file: Path, context: int,
             cut: list[str]) -> Found | None:
    read = _read(workspace, file)
    if read is None or is_binary(read[0][:SNIFF]):
        return None
    data, more = read
    lines = data.decode("utf-8", "replace").splitlines()
    if more:
        cut.append(str(file))
        lines = lines[:-1]  # the last line may be cut in the middle
    hits = Found()
    for number, line in enumerate(lines, 1):
        if regex.search(line):
            for near in range(max(1, number - context), min(len(lines), number + context) + 1):
                if near not in hits.lines or near == number:
                    hits.lines[near] = (near == number or hits.lines.get(near, (False,))[0],
                                        lines[near - 1])
    return hits if hits.lines else None
