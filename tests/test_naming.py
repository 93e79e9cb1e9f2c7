"""Model-facing tool names: valid, unique, stable, and never shadowing."""

from __future__ import annotations

import re

from tui_agent.tools.naming import catalog_names

VALID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def test_plain_names() -> None:
    assert catalog_names([("git", "git_status"), ("time", "get-time")]) == {
        ("git", "git_status"): "git__git_status", ("time", "get-time"): "time__get-time"}


def test_invalid_characters_and_long_names() -> None:
    names = catalog_names([("my server", "read.file"), ("s", "t" * 100)])
    assert names[("my server", "read.file")] == "my_server__read_file"
    long = names[("s", "t" * 100)]
    assert VALID.fullmatch(long) and len(long) == 64


def test_collisions_get_distinct_names_whatever_the_order() -> None:
    pairs = [("a", "get.file"), ("a", "get_file"), ("a_", "_get_file"), ("b", "x")]
    first = catalog_names(pairs)
    second = catalog_names(list(reversed(pairs)))
    assert first == second
    assert len(set(first.values())) == len(pairs)
    assert first[("b", "x")] == "b__x"
    assert all(VALID.fullmatch(n) for n in first.values())
    assert "a__get_file" not in first.values()  # nobody gets the contested name
