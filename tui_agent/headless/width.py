"""How wide a printed table may be: the terminal's width when the output is one, a
fixed width when it is a pipe or a file (what reads it there is not a screen), and
lines cut to it with an ellipsis rather than left to wrap mid-word.

``$COLUMNS`` wins over both, as :func:`shutil.get_terminal_size` lets it: a person (or a
test) can ask for a width. The terminal asked is ``out``'s own (``shutil`` would ask
``sys.__stdout__``'s, which is not always where the table goes).
"""

from __future__ import annotations

import contextlib
import os
import unicodedata
from typing import IO

PIPE_COLUMNS = 100
"""The width of a table printed to a pipe or a file: wider than the classic terminal's
80 (a description has room to say something), narrow enough to read in a pager."""


def columns(out: IO[str]) -> int:
    """The width ``out``'s lines should keep to (at least 20)."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return max(int(given), 20)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        if out.isatty():
            found = os.get_terminal_size(out.fileno()).columns
            if found > 0:  # a new pseudo-terminal says 0 until someone sets its size
                return max(found, 20)
    return PIPE_COLUMNS


def cells(char: str) -> int:
    """The cells ``char`` takes on a terminal: 2 for a wide one, 0 for a combining one."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells, ending in "…" when it was cut."""
    if sum(cells(c) for c in text) <= width:
        return text
    used, out = 0, []
    for char in text:
        if used + cells(char) > width - 1:
            break
        used += cells(char)
        out.append(char)
    return "".join(out).rstrip() + "…"
