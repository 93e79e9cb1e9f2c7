"""A cheap sign of change in the folders users write prompts in (skills, command files):
stat calls only, no file read, so a front end can look before every turn and read the
folders again only when something in them was added, removed, renamed or edited."""

from __future__ import annotations

import os
from collections.abc import Iterable
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
