"""The README as a new user follows it: a fresh clone, the install line, then the examples."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_the_venv_is_named_before_the_first_example_that_calls_plain_tui_agent() -> None:
    """The install line puts ``tui-agent`` in ``.venv/bin``, not on PATH: before the first
    example that calls it bare, the README says to activate the venv or use the path."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bare = re.search(r"^(?:\$ )?tui-agent\b", readme, re.MULTILINE)
    assert bare is not None
    before = readme[:bare.start()]
    assert "source .venv/bin/activate" in before and "`.venv/bin/tui-agent`" in before
