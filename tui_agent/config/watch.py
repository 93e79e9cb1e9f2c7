"""Notice edits to the config files while the app runs, by polling their status.

A handful of ``stat`` calls a second costs nothing and needs no platform file-watch
API. A file counts as changed once its size, modification time or inode (an editor
that saves by renaming) differ from what was last applied, and have stayed so for one
poll: a save caught half-written is read only when it has settled.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

Stamp = tuple[tuple[str, int, int, int] | tuple[str], ...]


def stamp(files: Iterable[Path]) -> Stamp:
    out: list[tuple[str, int, int, int] | tuple[str]] = []
    for file in sorted(set(files)):
        try:
            st = os.stat(file)
        except OSError:
            out.append((str(file),))  # absent (or unreadable): its appearance is a change
            continue
        out.append((str(file), st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


class Watch:
    """The config files of one load, and whether they have changed since."""

    def __init__(self, files: Iterable[Path]) -> None:
        self.files = sorted(set(files))
        self._applied = self._last = stamp(self.files)

    def changed(self) -> bool:
        """True once per settled change (call it every poll)."""
        now = stamp(self.files)
        settled = now == self._last
        self._last = now
        if settled and now != self._applied:
            self._applied = now
            return True
        return False
