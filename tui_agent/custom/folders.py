"""The folders users write prompts in (skills, command files, agent files): a cheap sign
of change (stat calls only, no file read, so a front end can look before every turn and
read the folders again only when something in them was added, removed, renamed or
edited), and the one walk that lists the ``*.md`` files of a command or agent folder."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

Stamp = tuple[tuple[str, int, int], ...]

MAX_ENTRIES = 5000
"""Entries looked at, at most, over all the folders (a huge tree is not walked whole at
every turn: past this, a change deeper in goes unseen until the next restart)."""


def stamp(folders: Iterable[Path], depth: int = 4) -> Stamp:
    """``(path, mtime in ns, size)`` of each folder and of every entry below it, ``depth``
    levels down (links followed, as the readers follow them), in a stable order; a
    missing folder is a stamp of its own. Never raises."""
    found: list[tuple[str, int, int]] = []
    for folder in folders:
        _walk(folder, depth, found)
    return tuple(found)


def _walk(folder: Path, depth: int, found: list[tuple[str, int, int]]) -> None:
    try:
        st = os.stat(folder)
    except OSError:
        found.append((str(folder), -1, -1))
        return
    found.append((str(folder), st.st_mtime_ns, st.st_size))
    if depth <= 0 or len(found) >= MAX_ENTRIES:
        return
    try:
        with os.scandir(folder) as entries:
            children = sorted(entries, key=lambda e: e.name)
    except OSError:
        return
    for entry in children:
        if len(found) >= MAX_ENTRIES:
            return
        try:
            is_dir = entry.is_dir()
            if not is_dir:
                st = entry.stat()
                found.append((entry.path, st.st_mtime_ns, st.st_size))
        except OSError:
            continue
        if is_dir:
            _walk(Path(entry.path), depth - 1, found)


Problem = Callable[[Path, int, str], None]
"""Where a walk reports what it could not read: ``(path, line, message)``."""


def markdown_files(folder: Path, *, project: bool, limit: int, what: str,
                   problem: Problem) -> Iterator[Path]:
    """The ``*.md`` files below ``folder``, top level first then by path, at most
    ``limit`` of them (``what`` names them in the problem past it: "command files"). A
    project's file may not lead out of its folder through a symlink: it is reported, not
    yielded. A missing folder yields nothing; one that cannot be listed is reported."""
    if not folder.is_dir():
        return
    try:
        root = folder.resolve()
        files = sorted(folder.rglob("*.md"),
                       key=lambda f: (len(f.relative_to(folder).parts), str(f)))
    except OSError as exc:
        problem(folder, 0, f"cannot list the folder: {exc}")
        return
    if len(files) > limit:
        problem(folder, 0, f"{len(files)} {what}: only the first {limit} are read")
    for file in files[:limit]:
        if project and not file.resolve().is_relative_to(root):
            problem(file, 0, f"leads out of the project's {folder.name} folder (a symlink): "
                    "not read")
        elif file.is_file():
            yield file
