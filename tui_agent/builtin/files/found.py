"""What one grep engine found (:mod:`.ripgrep` or :mod:`.walk`): the lines of each file,
whether it stopped before the end (more lines than one answer shows), and the notes to
add (a file searched in part, a deadline reached), which :mod:`.grep` formats."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MOST_LINES = 500
"""Lines (matches and context) one call shows; an engine stops once it has more."""
TIMEOUT = 30.0
"""Seconds a search may take; what was found by then is answered, with a note."""


@dataclass
class Found:
    """The lines found in one file: number -> (is a match, text)."""

    lines: dict[int, tuple[bool, str]] = field(default_factory=dict)


@dataclass
class Hits:
    """Every file's lines, and what the answer should say about the search itself."""

    files: dict[Path, Found] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    more: bool = False
    """It stopped with more than :data:`MOST_LINES` lines: there are more."""

    def count(self) -> int:
        return sum(len(f.lines) for f in self.files.values())

    def full(self) -> bool:
        """More than one answer shows: the engine stops (and says so)."""
        if self.count() > MOST_LINES:
            self.more = True
        return self.more
