"""tui-agent's own system prompt and project memory (AGENTS.md and its kin), headless.

The scripted LLM server records each request: the system message carries tui-agent's own
part, ``append_system_prompt``, the environment, then the memory files (the user's, then
the project root's down to the working directory: nearer last), then the servers'
instructions. A project's files are read only once it is trusted; edits show at the next
turn and, unchanged, the prompt's bytes are too. Bad files are named and the turn goes on.
Files are written as Claude Code's and gemini-cli's documentation shows them (``@path``
imports relative to the file, ``~/`` for home, none inside code).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tui_agent.cli import main
from tui_agent.config import load, paths
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import DenyAll
from tui_agent.custom.memory import MAX_DEPTH, MAX_FILE, Where, imports, read_memory
from tui_agent.wiring import build
from tui_agent.wiring.prompt import hold_memory

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree with memory at its root (AGENTS.md) and in ``pkg`` (CLAUDE.md and
    GEMINI.md: only the first is read), the user's own AGENTS.md in the config folder, and
    the working directory in ``pkg``."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    root = home / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Repo\nROOT-NOTE: run `make test`.\n", encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "CLAUDE.md").write_text("PKG-NOTE\n", encoding="utf-8")
    (root / "pkg" / "GEMINI.md").write_text("GEMINI-NOTE\n", encoding="utf-8")
    user = paths.default_config_file().parent
    user.mkdir(parents=True, exist_ok=True)
    (user / "AGENTS.md").write_text("USER-NOTE\n", encoding="utf-8")
    monkeypatch.chdir(root / "pkg")
    return root


def run_args(fake: FakeLLM, *args: str) -> list[str]:
    return ["run", "--model", "openai/fake-model", "--api-base", fake.base_url,
            "--output", "jsonl", *args]


def system_of(fake: FakeLLM, request: int = 0) -> str:
    first = fake.requests[request]["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def in_order(text: str, *marks: str) -> bool:
    where = [text.find(mark) for mark in marks]
    return -1 not in where and where == sorted(where)


def test_run_sends_the_parts_in_order_with_nearer_memory_last(
        project: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    config = project.parent / "c.toml"
    config.write_text('[model]\nappend_system_prompt = "APPEND-NOTE"\n', encoding="utf-8")
    fake_llm.push(Reply(text="ok"))
    code = main(["--config", str(config), *run_args(fake_llm, "--trust-project", "hi")])
    assert code == 0, capsys.readouterr().err
    system = system_of(fake_llm)
    assert system.startswith("You are tui-agent")
    assert "denied call is the user's decision" in system
    assert in_order(system, "You are tui-agent", "APPEND-NOTE", "Environment:",
                    f"- Working directory: {project / 'pkg'}", "- Git repository: yes",
                    "Project memory:", "USER-NOTE", "ROOT-NOTE", "PKG-NOTE")
    assert "GEMINI-NOTE" not in system, "a folder's first file of the list is read"


def test_system_prompt_replaces_the_own_part_only(
        project: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    config = project.parent / "c.toml"
    config.write_text('[model]\nsystem_prompt = "Be terse."\n', encoding="utf-8")
    fake_llm.push(Reply(text="ok"))
    assert main(["--config", str(config), *run_args(fake_llm, "--trust-project", "hi")]) == 0
    system = system_of(fake_llm)
    assert system.startswith("Be terse.\n\nEnvironment:")
    assert "You are tui-agent" not in system and "PKG-NOTE" in system


def test_an_untrusted_projects_memory_is_not_read_and_the_warning_lists_it(
        project: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="ok"))
    assert main(run_args(fake_llm, "hi")) == 0
    err = capsys.readouterr().err
    assert "memory AGENTS.md: instructions sent to the model" in err
    assert "memory pkg/CLAUDE.md" in err and "--trust-project" in err
    system = system_of(fake_llm)
    assert "USER-NOTE" in system, "the user's own memory needs no trust"
    assert "ROOT-NOTE" not in system and "PKG-NOTE" not in system


def test_no_project_reads_no_project_memory_even_in_a_trusted_project(
        project: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="ok"), Reply(text="ok"))
    assert main(run_args(fake_llm, "--trust-project", "hi")) == 0  # trusted, remembered
    assert "ROOT-NOTE" in system_of(fake_llm, 0)
    capsys.readouterr()
    assert main(run_args(fake_llm, "--no-project", "hi")) == 0
    assert "memory AGENTS.md" not in capsys.readouterr().err, "nothing to trust is asked"
    system = system_of(fake_llm, 1)
    assert "USER-NOTE" in system, "the user's own memory is not the project's"
    assert "ROOT-NOTE" not in system and "PKG-NOTE" not in system
    assert f"- Working directory: {project / 'pkg'}" in system


async def test_edits_apply_at_the_next_turn_and_unchanged_bytes_stay_the_same(
        project: Path, fake_llm: FakeLLM) -> None:
    settings = load()
    hold_memory(settings, trust=True)
    settings.config.model = settings.config.model.model_copy(update={
        "name": "openai/fake-model", "api_base": fake_llm.base_url, "api_key": "k"})
    agent = build.agent(settings, LLM(settings.config.model), DenyAll(),
                        build.policy_from(settings))
    fake_llm.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    for text in ("a", "b"):
        [e async for e in agent.run_turn(text)]
    assert system_of(fake_llm, 0) == system_of(fake_llm, 1), "nothing changed: same bytes"
    agent_md = project / "AGENTS.md"
    agent_md.write_text("ROOT-NOTE-EDITED\n", encoding="utf-8")
    os.utime(agent_md, ns=(1, 1))  # a new mtime even on a coarse clock
    [e async for e in agent.run_turn("c")]
    assert "ROOT-NOTE-EDITED" in system_of(fake_llm, 2)


def test_bad_memory_files_are_named_and_the_turn_goes_on(
        project: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    outside = project.parent.parent / "outside.md"
    outside.write_text("OUTSIDE-NOTE\n", encoding="utf-8")
    big = "- keep it short\n" * (MAX_FILE // 16 + 200)
    (project / "AGENTS.md").write_text(
        f"ROOT-NOTE\n@docs/a.md\n@{outside}\n@latin1.md\n@zero.md\n`@docs/never.md`\n"
        f"```\n@docs/never.md\n```\n{big}TAIL-NOTE\n", encoding="utf-8")
    (project / "docs").mkdir()
    (project / "docs" / "a.md").write_text("A-NOTE @b.md\n", encoding="utf-8")
    (project / "docs" / "b.md").write_text("B-NOTE @a.md\n", encoding="utf-8")
    (project / "docs" / "never.md").write_text("NEVER-NOTE\n", encoding="utf-8")
    (project / "latin1.md").write_bytes("caf\xe9\n".encode("latin-1"))
    (project / "zero.md").symlink_to("/dev/zero")
    (project / "pkg" / "AGENTS.md").symlink_to("/dev/zero")  # before pkg's CLAUDE.md
    fake_llm.push(Reply(text="ok"))
    assert main(run_args(fake_llm, "--trust-project", "hi")) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    notices = "\n".join(e["message"] for e in events if e["type"] == "notice")
    assert f"{project / 'AGENTS.md'}: cut: it is" in notices
    assert f"{project / 'docs' / 'b.md'}:1: @a.md imports a file already being read " \
        "(a.md → b.md → a.md)" in notices
    assert f"@{outside} is outside the project and your home folder" in notices
    assert f"{project / 'latin1.md'}: not read: not UTF-8 text (byte 3 is 0xe9)" in notices
    assert "AGENTS.md:5: @zero.md is outside the project and your home folder " \
        "(/dev/zero)" in notices
    assert f"{project / 'pkg' / 'AGENTS.md'}: not read: not a regular file" in notices
    assert events[-1]["type"] == "done"
    system = system_of(fake_llm)
    assert in_order(system, "ROOT-NOTE", "A-NOTE", "B-NOTE")
    for absent in ("OUTSIDE-NOTE", "NEVER-NOTE", "TAIL-NOTE", "café", "PKG-NOTE"):
        assert absent not in system


def test_imports_chain_at_most_five_deep(tmp_path: Path) -> None:
    for i in range(MAX_DEPTH + 2):
        (tmp_path / f"{i}.md").write_text(f"NOTE-{i} @{i + 1}.md\n", encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("@0.md\n", encoding="utf-8")
    memory = read_memory(Where(None, tmp_path, tmp_path, tmp_path, trusted=True))
    read = [f.path.name for f in memory.files]
    assert read == ["AGENTS.md", *(f"{i}.md" for i in range(MAX_DEPTH))]
    assert [p.message for p in memory.problems] == [
        f"its imports are not read: imports nest at most {MAX_DEPTH} deep"]


def test_imports_are_found_as_claude_code_reads_them() -> None:
    text = ("See @README for an overview and @package.json for commands.\n"
            "Mail me at me@example.com. Inline `@not/this.md` is code.\n"
            "~~~\n@fenced.md\n~~~\n- git workflow @docs/git-instructions.md\n"
            "@~/.claude/my-project-instructions.md\n@my\\ notes.md\n")
    assert imports(text) == [(1, "README"), (1, "package.json"),
                             (6, "docs/git-instructions.md"),
                             (7, "~/.claude/my-project-instructions.md"), (8, "my notes.md")]
