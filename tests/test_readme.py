"""The README as a new user follows it: a fresh clone, the install line, then the examples;
and the docs/ pages it links to, whose links must lead somewhere."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tui_agent.config import load

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))

MAX_LINES = 200
"""The README is read in five minutes (issue 35): 185 lines when it was cut down to that,
plus a little room. The reference and the internals belong in docs/."""

LINK = re.compile(r"(?<!!)\[(?:[^\]]|\n)*?\]\(([^)\s]+)\)")
FENCE = re.compile(r"^ *```.*?^ *```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def test_the_venv_is_named_before_the_first_example_that_calls_plain_tui_agent() -> None:
    """The install line puts ``tui-agent`` in ``.venv/bin``, not on PATH: before the first
    example that calls it bare, the README says to activate the venv or use the path."""
    readme = README.read_text(encoding="utf-8")
    bare = re.search(r"^(?:\$ )?tui-agent\b", readme, re.MULTILINE)
    assert bare is not None
    before = readme[:bare.start()]
    assert "source .venv/bin/activate" in before and "`.venv/bin/tui-agent`" in before


def test_ci_runs_the_readmes_test_command_exactly() -> None:
    """``.ci/run`` ends with the README's second command (the one after "run the whole
    suite"), word for word: CI tests what a developer is told to run."""
    readme = README.read_text(encoding="utf-8")
    after = readme[readme.index("run the whole suite"):]
    command = re.search(r"```sh\n(.+?)\n```", after, re.DOTALL)
    assert command is not None
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()
    assert ci[-1] == command.group(1).strip()
    assert "pytest -n auto" in ci[-1]  # the suite runs in parallel


def test_the_readme_is_read_in_five_minutes() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, (f"README.md has {lines} lines, over {MAX_LINES}: move the "
                                "detail to a docs/ page and link it")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped (letters,
    digits, ``-`` and ``_`` stay), spaces to ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(ch for ch in text
                   if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (a repeated one gets ``-1``, ``-2``...)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#* *$", text, re.MULTILINE):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """Each relative link in ``page`` (outside code) whose file, or anchor in it, does not
    exist, as ``page:line: target (why)``."""
    raw = page.read_text(encoding="utf-8")
    # Blank out code, keeping every newline, so a line number still points at the link.
    text = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), raw)
    text = INLINE_CODE.sub(lambda m: " " * len(m.group()), text)
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:...
            continue
        where = "/".join(page.parts[-2:]) if page.parent.name == "docs" else page.name
        line = text.count("\n", 0, match.start(1)) + 1
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{where}:{line}: {target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{where}:{line}: {target} (no heading '#{anchor}' in {file.name})")
    return broken


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    """The link check can fail: a missing file, a missing heading, and a good link beside
    them (in code, a link-like text is not a link)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A page\n\n## Headless: `tui-agent run`\n")
    page = docs / "b.md"
    page.write_text("# B\n\nsee [it](a.md#headless-tui-agent-run), [gone](c.md),\n"
                    "[lost](a.md#nowhere) and [here](#b).\n\n```\n[x](nothing.md)\n```\n"
                    "`[y](nothing.md)`\n")
    assert broken_links(page) == ["docs/b.md:3: c.md (no such file)",
                                  "docs/b.md:4: a.md#nowhere (no heading '#nowhere' in a.md)"]


def test_every_doc_page_is_linked_from_the_readme() -> None:
    """A page nobody can reach from the README is lost: each docs/ page is linked there."""
    readme = README.read_text(encoding="utf-8")
    linked = {(ROOT / m.group(1).partition("#")[0]).resolve()
              for m in LINK.finditer(readme) if m.group(1).startswith("docs/")}
    assert [p.name for p in DOCS if p.resolve() not in linked] == []


def test_the_readmes_config_example_is_a_valid_config(tmp_path: Path) -> None:
    """The one TOML example the README shows loads as it is: every key in it exists."""
    readme = README.read_text(encoding="utf-8")
    section = readme[readme.index("\n## Configuration\n"):]
    example = re.search(r"```toml\n(.+?)```", section, re.DOTALL)
    assert example is not None
    file = tmp_path / "config.toml"
    file.write_text(example.group(1), encoding="utf-8")
    config = load(file, project=False).config
    assert config.model.name == "anthropic/claude-sonnet-4-5"
    assert config.servers["time"].auto == ["get_current_time"]


def test_every_bench_the_docs_name_exists() -> None:
    """The figures moved to docs/ with the commands that print them: each
    ``python -m tests.bench.NAME`` named there is a module of tests/bench."""
    named = {m for page in [README, *DOCS]
             for m in re.findall(r"python -m tests\.bench\.(\w+)", page.read_text("utf-8"))}
    assert len(named) >= 10  # performance.md's list of benches moved with it
    missing = [n for n in sorted(named) if not (ROOT / "tests" / "bench" / f"{n}.py").exists()]
    assert missing == []
