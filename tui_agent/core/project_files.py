"""The project's files for the ``@`` picker, and fuzzy matching over them.

In a git work tree the list is git's own (tracked and untracked files, without what
``.gitignore`` and the other exclude files leave out). Elsewhere the directory is
walked, skipping hidden directories and what the ``.gitignore`` files on the way name
(by git's own pattern rules, through ``pathspec``). Either way the list stops at
:data:`MOST_FILES`.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import re
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

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
    """The patterns of one ``.gitignore``, for paths relative to its directory, matched by
    git's own rules (``pathspec``'s wildmatch: ``**``, ``[!...]`` classes, ``\\#`` and
    ``\\!`` escapes, escaped trailing spaces, ``dir/`` for directories only, the last
    matching line winning). A line git would reject (a trailing backslash, a reversed range
    ``[z-a]``) is skipped, as git skips it."""

    def __init__(self, lines: list[str]) -> None:
        from pathspec import GitIgnoreSpec  # only a walk outside git needs it

        with warnings.catch_warnings():  # re's FutureWarning on "[[" in a class
            warnings.simplefilter("ignore", FutureWarning)
            valid = [line for line in lines if _valid(GitIgnoreSpec, line)]
            self.spec: GitIgnoreSpec = GitIgnoreSpec.from_lines(valid)
            # For a directory, without the lines that match only inside one: `foo/**`
            # leaves out what foo holds, not foo (pathspec matches `foo/` too), and a
            # `!foo/keep` below it must still find foo/keep.
            self.dirs: GitIgnoreSpec = GitIgnoreSpec.from_lines(
                [line for line in valid if not line.rstrip(" /").endswith("/**")])

    def verdict(self, relative: str, is_dir: bool) -> bool | None:
        """True when the last line matching ``relative`` ignores it, False when it is a
        ``!`` line (kept again), None when no line matches."""
        if is_dir:
            return self.dirs.check_file(relative + "/").include
        return self.spec.check_file(relative).include

    def ignores(self, relative: str, is_dir: bool) -> bool:
        return bool(self.verdict(relative, is_dir))


def _valid(spec: type[GitIgnoreSpec], line: str) -> bool:
    try:
        spec.from_lines([line])
    except (ValueError, re.error):  # GitIgnorePatternError is a ValueError
        return False
    return True


def _walk(root: Path, most: int) -> list[str]:
    found: list[str] = []
    # The .gitignore files that apply in each directory walked, its own first: as in git,
    # a deeper file's verdict on a path overrides a shallower one's.
    chains: dict[str, list[tuple[str, Ignore]]] = {}
    for top, dirs, files in os.walk(root):
        here = Path(top).relative_to(root).as_posix()
        here = "" if here == "." else here + "/"
        chain = chains.pop(here, [])
        gitignore = Path(top) / ".gitignore"
        if gitignore.is_file():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                chain = [(here, Ignore(gitignore.read_text("utf-8").splitlines())), *chain]

        def ignored(name: str, is_dir: bool, here: str = here,
                    chain: list[tuple[str, Ignore]] = chain) -> bool:
            path = here + name
            for base, rules in chain:
                verdict = rules.verdict(path[len(base):], is_dir)
                if verdict is not None:
                    return verdict
            return False

        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED
                         and not ignored(d, True))
        chains.update((here + d + "/", chain) for d in dirs)
        found += [here + f for f in sorted(files) if not ignored(f, False)]
        if len(found) >= most:
            break
    return found


class FileIndex:
    """The files, prepared once for ranking query after query: each lowered, and joined,
    :data:`BLOCK` at a time, into texts that a compiled regex scans in C for the paths
    holding the query's letters in order, so that only those are scored in Python.

    Read-only once built, so safe to use from several threads at once: the ``@`` picker
    ranks in a worker thread and may start a newer ranking before an older one has
    noticed it is stale. Work is done a block at a time (a scan and the scoring of what it
    found, a few milliseconds), and :meth:`ranking` yields between blocks: there a caller
    can stop, and a thread gives the interpreter back to the UI.
    """

    BLOCK = 250
    """Paths scanned and scored between two yields of :meth:`ranking`."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self.lowered = [f.lower() for f in files]
        plain = [i for i, low in enumerate(self.lowered) if "\n" not in low]
        self.blocks = [self._block(plain[at:at + self.BLOCK])
                       for at in range(0, len(plain), self.BLOCK)]
        # A path with a newline in it (git allows one) is matched on its own, the way
        # rank() always did: "." does not cross a newline, so the needle must fit in one
        # of its lines.
        self.odd = [i for i, low in enumerate(self.lowered) if "\n" in low]

    def _block(self, indices: list[int]) -> tuple[str, dict[int, int]]:
        """The paths joined, each after a NUL (no path holds one), and the index in
        :attr:`files` of the path whose NUL is at each offset."""
        at, offset = {}, 0
        for i in indices:
            at[offset] = i
            offset += 1 + len(self.lowered[i])
        return "".join("\0" + self.lowered[i] for i in indices), at

    def ranking(self, query: str,
                limit: int = 50) -> Iterator[list[tuple[str, list[int]]] | None]:
        """Rank ``query`` as :func:`rank` does, a block at a time: yields None after each
        block (where a caller can stop a ranking a newer query made stale), then the
        result."""
        needle = query.lower().replace(" ", "")
        if not needle or "\0" in needle:  # a NUL would match the separator
            yield [(f, []) for f in self.files[:limit]] if not needle else []
            return
        # Each class stops at the next letter wanted or at the next path, and never gives
        # back what it took: the earliest placement is the only one tried, so a path that
        # does not match costs one pass over it (no backtracking).
        finder = re.compile("\0" + "".join(f"[^{re.escape(c)}\0]*+{re.escape(c)}"
                                            for c in needle))
        best: list[tuple[float, str, int]] = []
        for text, at in self.blocks:
            best = self._best_of(needle, [at[m.start()] for m in finder.finditer(text)],
                                 best, limit)
            yield None
        if self.odd:
            loose = re.compile(".*?".join(map(re.escape, needle)))
            best = self._best_of(needle, [i for i in self.odd
                                          if loose.search(self.lowered[i]) is not None],
                                 best, limit)
        yield [(path, _spots(needle, self.lowered[i])) for _, path, i in best]

    def _best_of(self, needle: str, found: list[int], best: list[tuple[float, str, int]],
                 limit: int) -> list[tuple[float, str, int]]:
        """The ``limit`` best of ``best`` and the found files, keyed so that the smallest
        is the best (the highest score, then by name, as rank() always sorted).

        What is kept holds no list (the positions matched are placed again for the few
        shown): the garbage collector stops tracking a tuple of a float, a string and an
        int, so a ranking does not feed its full collections, which stall every thread.
        """
        scored = best.copy()
        for i in found:
            placed = _best(needle, self.lowered[i])
            if placed is not None:
                path = self.files[i]
                scored.append((len(path) * 0.01 - placed[0], path, i))
        return heapq.nsmallest(limit, scored)


def rank(query: str, files: list[str], limit: int = 50) -> list[tuple[str, list[int]]]:
    """The files that hold the query's characters in order (case-insensitive), best
    first, each with the positions matched: a match in the file name beats one across
    directories, consecutive characters and word starts count, shorter paths win ties.
    An empty query gives the first ``limit`` files.

    To rank many queries over the same files, build a :class:`FileIndex` once."""
    *_, result = FileIndex(files).ranking(query, limit)
    assert result is not None
    return result


def _best(needle: str, path: str) -> tuple[float, list[int]] | None:
    """The better of two greedy placements: from the file name backwards, or forwards
    (the file name's on a tie)."""
    name_start = path.rfind("/") + 1
    in_name, anywhere = _place(needle, path, name_start), _place(needle, path, 0)
    if in_name is None or in_name == anywhere:
        return None if anywhere is None else (_score(path, anywhere, name_start), anywhere)
    if anywhere is None:
        return _score(path, in_name, name_start), in_name
    first, second = _score(path, in_name, name_start), _score(path, anywhere, name_start)
    return (first, in_name) if first >= second else (second, anywhere)


def _spots(needle: str, path: str) -> list[int]:
    placed = _best(needle, path)
    assert placed is not None  # only for a path that matched
    return placed[1]


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
    before = -2
    for spot in spots:
        score += 1
        if spot >= name_start:
            score += 2
        if spot == before + 1:  # right after the letter before
            score += 3
        if spot == 0 or path[spot - 1] in "/_-. ":
            score += 2
        before = spot
    return score
