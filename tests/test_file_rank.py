"""Ranking the ``@`` picker's files got faster (issue 33) and must not have changed: rank()
and FileIndex give, query for query, what the ranking of before gave. The reference below
is that ranking as it was (a regex per path, every match scored, one sort)."""

from __future__ import annotations

import random
import re

import pytest

from tui_agent.core.project_files import FileIndex, rank

WORDS = ["app", "core", "ui", "screen", "config", "test", "util", "server", "agent",
         "file", "data", "index", "main"]


def reference(query: str, files: list[str], limit: int = 50) -> list[tuple[str, list[int]]]:
    if not query:
        return [(f, []) for f in files[:limit]]
    needle = query.lower().replace(" ", "")
    finder = re.compile(".*?".join(map(re.escape, needle)))
    scored = []
    for path in files:
        lowered = path.lower()
        if finder.search(lowered) is None:
            continue
        name_start = lowered.rfind("/") + 1
        options = [s for s in (place(needle, lowered, name_start), place(needle, lowered, 0))
                   if s is not None]
        best = max(((score(lowered, s, name_start), s) for s in options),
                   key=lambda item: item[0])
        scored.append((best[0] - len(path) * 0.01, path, best[1]))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(path, spots) for _, path, spots in scored[:limit]]


def place(needle: str, path: str, start: int) -> list[int] | None:
    spots, at = [], start
    for char in needle:
        at = path.find(char, at)
        if at < 0:
            return None
        spots.append(at)
        at += 1
    return spots


def score(path: str, spots: list[int], name_start: int) -> float:
    total = 3.0 if spots[0] == name_start else 0.0
    for index, spot in enumerate(spots):
        total += 1
        if spot >= name_start:
            total += 2
        if index and spots[index - 1] == spot - 1:
            total += 3
        if spot == 0 or path[spot - 1] in "/_-. ":
            total += 2
    return total


def paths(count: int, seed: int) -> list[str]:
    pick = random.Random(seed)
    found = {"/".join(pick.choice(WORDS) + pick.choice(("", "_", "-", ".", "2"))
                      for _ in range(pick.randint(1, 4))) + pick.choice((".py", ".md", ""))
             for _ in range(count)}
    # the odd ones: a newline (git allows one), letters lower() changes the length of,
    # and the characters a regex or a character class treats specially
    found |= {"a\nb/c.py", "b\napp/x.py", "İstanbul/app.py", "Über/ß.md", "a[b]/c^d\\e.py",
              "x-y/z_w.py", "dir]/^-\\.py", "SRC/App.PY"}
    return sorted(found)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rank_gives_what_it_gave(seed: int) -> None:
    files = paths(1500, seed)
    pick = random.Random(seed)
    letters = "apcoreuistfgdxmn/_-.[]^\\ İßü\n"
    queries = ["", "app", "a p", "SRC", "ap.py", "zzz", "uistatus"] + [
        "".join(pick.choice(letters) for _ in range(pick.randint(1, 6))) for _ in range(150)]
    for query in queries:
        if query and not query.replace(" ", ""):
            continue  # only spaces: the picker strips them first (the reference raised)
        expected = reference(query, files)
        assert rank(query, files) == expected, query
        assert rank(query, files, 1) == expected[:1], query


def test_the_index_ranks_block_by_block_to_the_same_end() -> None:
    files = paths(5000, 7)
    index = FileIndex(files)
    for query in ("a", "app", "corepy", "nothing-like-it"):
        steps = list(index.ranking(query, 20))
        assert steps[:-1] == [None] * (len(steps) - 1)  # a place to stop after each block
        assert len(steps) > len(files) // FileIndex.BLOCK  # one per block, then the result
        assert steps[-1] == reference(query, files, 20)


def test_a_nul_in_the_query_matches_nothing() -> None:
    """The index joins the paths with NULs: one typed must not match across two paths."""
    assert rank("y\0a", ["x/y", "a/b"]) == []
