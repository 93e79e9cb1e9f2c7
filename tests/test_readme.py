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


def test_ci_runs_the_readmes_test_command_exactly() -> None:
    """``.ci/run`` ends with the README's second command (the one after "run the whole
    suite"), word for word: CI tests what a developer is told to run."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    after = readme[readme.index("run the whole suite"):]
    command = re.search(r"```sh\n(.+?)\n```", after, re.DOTALL)
    assert command is not None
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()
    assert ci[-1] == command.group(1).strip()
    assert "pytest -n auto" in ci[-1]  # the suite runs in parallel
