"""Commands from files in ``tui-agent run``: ``/name args`` sends the command's expanded
body as the user's message (checked in the request the scripted model receives), with
the command's model; project commands only with the project's trust."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.skill_kit import skill
from tests.test_command_files import REVIEW
from tui_agent.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    root = tmp_path / "shop"
    (root / ".claude/commands").mkdir(parents=True)
    (root / ".claude/commands/review.md").write_text(REVIEW, encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs/style.md").write_text("Tabs, never spaces.\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def _run(fake: FakeLLM, *args: str) -> list[str]:
    return ["run", "--model", "openai/fake-model", "--api-base", fake.base_url, *args]


def test_a_command_sends_its_body_with_the_arguments(fake_llm: FakeLLM, project: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="Reviewed."))
    assert main(_run(fake_llm, "--trust-project", "/review 456 high Ada")) == 0
    out = capsys.readouterr()
    assert out.out == "Reviewed.\n"
    request = fake_llm.requests[0]
    sent = request["messages"][-1]
    assert sent["role"] == "user"
    text = sent["content"] if isinstance(sent["content"], str) else "\n".join(
        part.get("text", "") for part in sent["content"])
    assert text.startswith("Review PR #456 with priority high and assign to Ada.\n"
                           "Focus on: 456 high Ada\nCurrent status: !`git status`\n")
    assert "Tabs, never spaces." in text, "@docs/style.md is read as a typed @path is"
    assert request["model"] == "review-model", "the command's model, for this run"
    assert "!`git status` not run" in out.err


def test_an_untrusted_projects_command_is_not_run(fake_llm: FakeLLM, project: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="What review?"))
    assert main(_run(fake_llm, "/review 456")) == 0
    assert fake_llm.requests[0]["messages"][-1]["content"] == "/review 456"
    err = capsys.readouterr().err
    assert "is not trusted yet" in err and "commands in .claude/commands: review.md" in err


def test_a_bad_user_command_is_named_and_the_prompt_still_goes(
        fake_llm: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user = Path.home() / ".claude/commands/broken.md"
    user.parent.mkdir(parents=True)
    user.write_text("---\nmodel: [x\n---\nbody\n", encoding="utf-8")
    fake_llm.push(Reply(text="ok"))
    assert main(_run(fake_llm, "/broken now")) == 0
    err = capsys.readouterr().err
    assert f"{user}:3: bad frontmatter" in err
    assert fake_llm.requests[0]["messages"][-1]["content"] == "/broken now"


def test_a_skill_runs_as_a_command_with_its_arguments(
        fake_llm: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``/skill-name args``: the skill's SKILL.md body (without its frontmatter) is the
    message, ``$ARGUMENTS`` and ``$1`` filled as a command file's are."""
    skill(project / ".claude/skills", "changelog", "Writes the changelog of a release.",
          body="Write the changelog of release $1.\nMention: $ARGUMENTS\n")
    fake_llm.push(Reply(text="Written."))
    assert main(_run(fake_llm, "--trust-project", "/changelog v2.1 fixes")) == 0
    assert capsys.readouterr().out == "Written.\n"
    sent = fake_llm.requests[0]["messages"][-1]
    text = sent["content"] if isinstance(sent["content"], str) else "\n".join(
        part.get("text", "") for part in sent["content"])
    assert text.startswith("Write the changelog of release v2.1.\nMention: v2.1 fixes")
    assert "Writes the changelog" not in text, "the frontmatter is not sent"
