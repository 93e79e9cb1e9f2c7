"""The project's files for the ``@`` picker, and fuzzy matching over them.

In a git work tree the list is git's own (tracked and untracked files, without what
``.gitignore`` and the other exclude files leave out). Elsewhere the directory is
walked, skipping hidden directories and what the ``.gitignore`` files on the way name
(the common forms: globs, ``dir/``, ``/anchored``, ``!negation``). Either way the list
stops at :data:`MOST_FILES`.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from pathlib import Path

MOST_FILES = 50_000
"""Files listed at most (a home directory is not a project)."""
SKIPPED = {"node_modules", "__pycache__", ".git", ".hg", ".svn", ".venv", "venv"}
"""Directories never walked into outside git."""


def list_files(root: Path, most: int = MOST_FILES) -> list[str]:
    """The files under ``root``, relative, ``/``-separated, sorted (at most ``most``)."""
    found = _git_files(root)
    if found is None:
        found = _walk(root, most)
    return sorted(found[:most])


def _git_files(root: Path) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--deduplicate"],
            capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    names = [n for n in done.stdout.decode("utf-8", "replace").split("\0") if n]
    return [n for n in names if (root / n).is_file()]  # not a deleted one, nor a submodule


class Ignore:
    """The patterns of one ``.gitignore``, for paths relative to its directory."""

    def __init__(self, lines: list[str]) -> None:
        self.rules: list[tuple[bool, bool, bool, re.Pattern[str]]] = []
        for raw in lines:
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            line = line[1:] if negate else line
            directory = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            self.rules.append((negate, directory, anchored, _glob(line.lstrip("/"))))

    def ignores(self, relative: str, is_dir: bool) -> bool:
        name = relative.rsplit("/", 1)[-1]
        ignored = False
        for negate, directory, anchored, pattern in self.rules:
            if directory and not is_dir:
                continue
            if pattern.match(relative if anchored else name):
                ignored = not negate
        return ignored


def _glob(pattern: str) -> re.Pattern[str]:
    """A gitignore glob as a regex: ``*`` and ``?`` stay within a directory, ``**``
    crosses them; a match may go on below (``build`` matches ``build/x``)."""
    out, index = "", 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**", index):
            out, index = out + ".*", index + 2
            continue
        if char == "[" and (close := pattern.find("]", index + 1)) > index:
            out, index = out + pattern[index:close + 1], close + 1
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char))
        index += 1
    return re.compile(out + r"(?:/.*)?\Z")


def _walk(root: Path, most: int) -> list[str]:
    found: list[str] = []
    ignores: list[tuple[str, Ignore]] = []
    for top, dirs, files in os.walk(root):
        here = Path(top).relative_to(root).as_posix()
        here = "" if here == "." else here + "/"
        gitignore = Path(top) / ".gitignore"
        if gitignore.is_file():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                ignores.append((here, Ignore(gitignore.read_text("utf-8").splitlines())))

        def ignored(name: str, is_dir: bool, here: str = here) -> bool:
            path = here + name
            return any(path.startswith(base) and rules.ignores(path[len(base):], is_dir)
                       for base, rules in ignores)

        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED
                         and not ignored(d, True))
        found += [here + f for f in sorted(files) if not ignored(f, False)]
        if len(found) >= most:
            break
    return found


def rank(query: str, files: list[str], limit: int = 50) -> list[tuple[str, list[int]]]:
    """The files that hold the query's characters in order (case-insensitive), best
    first, each with the positions matched: a match in the file name beats one across
    directories, consecutive characters and word starts count, shorter paths win ties.
    An empty query gives the first ``limit`` files."""
    if not query:
        return [(f, []) for f in files[:limit]]
    needle = query.lower().replace(" ", "")
    finder = re.compile(".*?".join(map(re.escape, needle)))
    scored: list[tuple[float, str, list[int]]] = []
    for path in files:
        lowered = path.lower()
        if finder.search(lowered) is None:
            continue
        best = _best(needle, lowered)
        if best is not None:
            scored.append((best[0] - len(path) * 0.01, path, best[1]))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(path, spots) for _, path, spots in scored[:limit]]


def _best(needle: str, path: str) -> tuple[float, list[int]] | None:
    """The better of two greedy placements: from the file name backwards, or forwards."""
    name_start = path.rfind("/") + 1
    options = [spots for spots in (_place(needle, path, name_start), _place(needle, path, 0))
               if spots is not None]
    if not options:
        return None
    return max(((_score(path, spots, name_start), spots) for spots in options),
               key=lambda item: item[0])


def _place(needle: str, path: str, start: int) -> list[int] | None:
    """Positions of ``needle``'s characters in ``path``, each as early as possible from
    ``start`` (or None when they do not fit there)."""
    spots: list[int] = []
    at = start
    for char in needle:
        at = path.find(char, at)
        if at < 0:
            return None
        spots.append(at)
        at += 1
    return spots


def _score(path: str, spots: list[int], name_start: int) -> float:
    score = 3.0 if spots[0] == name_start else 0.0  # the file name starts with it
    for index, spot in enumerate(spots):
        score += 1
        if spot >= name_start:
            score += 2
        if index and spots[index - 1] == spot - 1:
            score += 3
        if spot == 0 or path[spot - 1] in "/_-. ":
            score += 2
    return score
