"""Find the line a key path lives on, so a validation error can name it.

tomllib and json give positions only for syntax errors; pydantic gives a key
path. These scanners map the path back to a line: exact key if present, else
the deepest table or object that contains it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_TABLE = re.compile(r"^\s*\[\[?\s*(?P<key>[^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*(?P<key>[A-Za-z0-9_\-\"'. ]+?)\s*=")


def _split_dotted(key: str) -> tuple[str, ...]:
    parts: list[str] = []
    for match in re.finditer(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([^.\s]+)', key):
        parts.append(next(g for g in match.groups() if g is not None))
    return tuple(parts)


def toml_line(text: str, path: Sequence[str | int]) -> int | None:
    """The 1-based line of ``path`` in TOML ``text``, or of its nearest defined parent."""
    want = tuple(str(p) for p in path)
    table: tuple[str, ...] = ()
    best_line, best_len = None, 0
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header:
            table = _split_dotted(header.group("key"))
            full = table
        else:
            assign = _ASSIGN.match(line)
            if not assign:
                continue
            full = table + _split_dotted(assign.group("key"))
        common = 0
        for a, b in zip(full, want, strict=False):
            if a != b:
                break
            common += 1
        if common == len(full) and common > best_len:
            best_line, best_len = number, common
            if common == len(want):
                return number
    return best_line


def json_line(text: str, path: Sequence[str | int]) -> int | None:
    """The 1-based line of ``path`` in JSON ``text``: each key searched after the one before.

    List indexes are skipped (entries are found by the keys inside them), which is
    exact for the config formats we read, whose list entries carry a ``name``.
    """
    pos, found = 0, None
    for part in path:
        if isinstance(part, int):
            continue
        match = re.compile(r'"' + re.escape(str(part)) + r'"\s*:').search(text, pos)
        if not match:
            break
        pos, found = match.end(), match.start()
    return None if found is None else text.count("\n", 0, found) + 1
