"""Skills in ``tui-agent run``, through the scripted model: the first request carries
each skill's name and description and nothing else of it; the model loads one with the
built-in ``skill`` tool (the body and the file list come back), then reads one of its
files; each call prints a line (``--output jsonl``: a ``skill`` event). A skill whose
``allowed-tools`` the user has not approved asks first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.skill_kit import FORMS, PDF_BODY, pdf_skill, skill, user_skills
from tui_agent.cli import main

pytestmark = pytest.mark.slow


def run(fake_llm: FakeLLM, tmp_path: Path, *flags: str) -> int:
    config = tmp_path / "c.toml"
    config.write_text('[model]\napi_key = "sk-test"\n')
    return main(["run", "--config", str(config), "--model", "openai/fake-model",
                 "--api-base", fake_llm.base_url, *flags, "fill in the form in a.pdf"])


def test_the_model_loads_a_skill_then_reads_one_of_its_files(
        fake_llm: FakeLLM, isolated_env: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    pdf_skill(user_skills(isolated_env))
    skill(user_skills(isolated_env), "broken", "x").joinpath("SKILL.md").write_text("# no\n")
    fake_llm.push(Reply(tool_calls=[FakeToolCall("skill", {"name": "pdf"}, id="s1")]),
                  Reply(tool_calls=[FakeToolCall("skill", {"name": "pdf", "file": "forms.md"},
                                                 id="s2")]),
                  Reply(text="Filled."))
    assert run(fake_llm, tmp_path, "--output", "jsonl") == 0
    captured = capsys.readouterr()
    events = [json.loads(line) for line in captured.out.splitlines()]
    first = fake_llm.requests[0]
    system = first["messages"][0]["content"]
    assert "- pdf: Use this skill whenever the user wants to do anything with PDF" in system
    sent = json.dumps(first)
    assert "pypdf" not in sent and "fill_form" not in sent and "Filling PDF" not in sent
    assert "skill" in {t["function"]["name"] for t in first["tools"]}
    results = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert results["s1"]["text"].startswith(PDF_BODY.strip())
    assert "- forms.md\n" in results["s1"]["text"]
    assert results["s2"]["text"] == FORMS and not results["s2"]["is_error"]
    skills = [e for e in events if e["type"] == "skill"]
    where = str(user_skills(isolated_env) / "pdf" / "SKILL.md")
    assert [(e["id"], e["name"], e["origin"], e["state"], e["file"], e["where"])
            for e in skills] == [("s1", "pdf", "user", "loaded", None, where),
                                 ("s2", "pdf", "user", "read", "forms.md", where)]
    assert [e["decision"] for e in events if e["type"] == "approval"] == ["auto", "auto"]
    assert f"tui-agent: warning: skill not offered: {user_skills(isolated_env)}/broken/" \
           "SKILL.md:1: no YAML frontmatter" in captured.err


def test_the_text_output_prints_a_line_per_skill_call(
        fake_llm: FakeLLM, isolated_env: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    pdf_skill(user_skills(isolated_env))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("skill", {"name": "pdf"}, id="s1"),
                                    FakeToolCall("skill", {"name": "pdf", "file": "../x"},
                                                 id="s2")]),
                  Reply(text="Done."))
    assert run(fake_llm, tmp_path) == 0
    err = capsys.readouterr().err
    where = user_skills(isolated_env) / "pdf" / "SKILL.md"
    assert "  skill pdf loaded (user, ~" in err and f"tokens): {where}\n" in err
    assert "  skill pdf refused: '../x': not a path inside the skill's folder (it must be " \
           "relative, without '..')\n" in err


def test_a_skill_with_allowed_tools_asks_and_a_denial_loads_nothing(
        fake_llm: FakeLLM, isolated_env: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    skill(user_skills(isolated_env), "git-helper", "Commits for you.",
          extra="allowed-tools: Bash(git:*) git__git_status\n")
    fake_llm.push(Reply(tool_calls=[FakeToolCall("skill", {"name": "git-helper"}, id="s1")]),
                  Reply(text="ok"))
    assert run(fake_llm, tmp_path, "--approve", "deny", "--output", "jsonl") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    approval = next(e for e in events if e["type"] == "approval")
    assert approval["decision"] == "denied"
    assert "git__git_status" in approval["reason"] and "Bash(git:*)" in approval["reason"]
    assert not [e for e in events if e["type"] == "skill"]
    assert "Do it well" not in json.dumps(fake_llm.requests[1])


def test_rules_and_modes_apply_to_the_skill_tool(
        fake_llm: FakeLLM, isolated_env: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``skill`` is judged like any tool where the person said so: a deny rule refuses it
    (nothing is read), an ask rule asks (``--approve deny`` answers no), an allow rule or
    auto mode lets a skill that would ask load; plan mode lets it load (reading a skill only
    reads)."""
    pdf_skill(user_skills(isolated_env))
    skill(user_skills(isolated_env), "git-helper", "Commits for you.",
          extra="allowed-tools: git__git_status\n")
    config = tmp_path / "c.toml"

    def approvals(rules: str, *flags: str, name: str = "pdf") -> list[dict[str, object]]:
        config.write_text(f'[model]\napi_key = "sk-test"\n[permissions]\n{rules}\n')
        fake_llm.push(Reply(tool_calls=[FakeToolCall("skill", {"name": name}, id="s1")]),
                      Reply(text="ok"))
        assert main(["run", "--config", str(config), "--model", "openai/fake-model",
                     "--api-base", fake_llm.base_url, "--output", "jsonl", *flags,
                     "fill in the form"]) == 0
        events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        loaded = [e["name"] for e in events if e["type"] == "skill"]
        return [{"decision": e["decision"], "by": e.get("by"), "loaded": loaded}
                for e in events if e["type"] == "approval"]

    denied = approvals('deny = ["mcp__tui-agent__skill(name=pdf)"]')
    assert denied == [{"decision": "denied", "loaded": [],
                       "by": f'deny rule "mcp__tui-agent__skill(name=pdf)" ({config}:4)'}]
    assert "PDF processing guide" not in json.dumps(fake_llm.requests[-1]["messages"])
    asked = approvals('ask = ["mcp__tui-agent__*"]', "--approve", "deny")
    assert [(a["decision"], a["loaded"]) for a in asked] == [("denied", [])]
    planned = approvals('deny = ["mcp__tui-agent__skill(name=other)"]', "--mode", "plan")
    assert [(a["decision"], a["loaded"]) for a in planned] == [("auto", ["pdf"])]
    allowed = approvals('allow = ["mcp__tui-agent__skill(name=git-helper)"]',
                        "--approve", "deny", name="git-helper")
    assert allowed == [{"decision": "auto", "loaded": ["git-helper"],
                        "by": f'allow rule "mcp__tui-agent__skill(name=git-helper)" '
                              f'({config}:4)'}]
    auto = approvals("", "--mode", "auto", "--approve", "deny", name="git-helper")
    assert [(a["decision"], a["by"], a["loaded"]) for a in auto] == [
        ("auto", "auto mode", ["git-helper"])]
