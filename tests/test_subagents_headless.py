"""Sub-agents headless: ``run --output jsonl`` prints every sub-agent event with its
``agent``; the text output shows its start, its calls, their approvals and results, and its
end (status, tokens, cost, time) prefixed with its name, never its streamed words; the
terminal's approval question says which agent asks; ``tui-agent agents`` lists the agents
and the broken files."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall
from tests.subagent_kit import (
    CHILD,
    CHILD_USAGE,
    agent_file,
    call_agent,
    config,
    reply,
    two_models,
)
from tests.test_agent_tools import fake_entry
from tui_agent.cli import main
from tui_agent.core.permissions import PendingCall
from tui_agent.headless.gate import TerminalGate

pytestmark = [pytest.mark.slow]

HELPER = f"""---
name: helper
description: Echoes things
tools: r__echo
model: {CHILD}
---
You are the helper.
"""


@pytest.fixture
def models() -> Iterator[tuple[FakeLLM, FakeLLM]]:
    with two_models() as both:
        yield both


def _script(parent: FakeLLM, child: FakeLLM) -> None:
    parent.push(reply(calls=[call_agent("call_1", "Echo hi", "helper")]),
                reply("Parent: the helper echoed hi."))
    child.push(reply("Echoing now.", [FakeToolCall("r__echo", {"text": "hi"}, id="c1")],
                     usage=CHILD_USAGE),
               reply("Child: it echoed hi", usage=CHILD_USAGE))


def _config(tmp_path: Path, parent: FakeLLM, child: FakeLLM) -> Path:
    server = fake_entry()
    extra = "\n[servers.r]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in server.items()
                                        if k != "env")
    extra += "[servers.r.env]\n" + "".join(f"{k} = {json.dumps(v)}\n"
                                           for k, v in server["env"].items())  # type: ignore[attr-defined]
    config(tmp_path, parent, child, extra)
    return tmp_path / "config.toml"


def test_jsonl_carries_the_agent_on_everything_a_sub_agent_emits(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    parent, child = models
    _script(parent, child)
    agent_file("helper", HELPER)
    code = main(["run", "--config", str(_config(tmp_path, parent, child)), "--approve", "auto",
                 "--output", "jsonl", "go"])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    tag = {"id": "call_1", "name": "helper"}
    start = next(e for e in events if e["type"] == "agent_start")
    assert (start["id"], start["name"], start["model"], start["task"]) == (
        "call_1", "helper", CHILD, "Echo hi")
    assert "agent" not in start, "the parent's own events carry no agent"
    inner = [e for e in events if e.get("agent") == tag]
    assert {"text", "tool_call", "approval", "tool_result"} <= {e["type"] for e in inner}
    assert "".join(e["delta"] for e in inner if e["type"] == "text") == (
        "Echoing now.Child: it echoed hi")
    assert [e["id"] for e in inner if e["type"] == "tool_call"] == ["c1"]
    end = next(e for e in events if e["type"] == "agent_end")
    assert (end["status"], end["turns"], end["tools"]) == ("done", 2, ["r__echo"])
    assert end["usage"]["total_tokens"] == 2 * CHILD_USAGE["total_tokens"]
    parent_text = "".join(e["delta"] for e in events if e["type"] == "text" and "agent" not in e)
    assert parent_text == "Parent: the helper echoed hi."
    done = events[-1]
    assert done["type"] == "done" and done["usage"]["total_tokens"] >= end["usage"][
        "total_tokens"]


def test_the_text_output_shows_the_sub_agents_steps_not_its_words(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    parent, child = models
    _script(parent, child)
    agent_file("helper", HELPER)
    code = main(["run", "--config", str(_config(tmp_path, parent, child)), "--approve", "auto",
                 "go"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.strip() == "Parent: the helper echoed hi."
    lines = [line for line in err.splitlines() if "helper" in line or line.startswith("[")]
    assert "⇢ agent helper (openai/child-model): Echo hi" in lines
    assert '[helper] → r__echo {"text": "hi"}' in lines
    assert "[helper]   approved: --approve auto" in lines
    assert "[helper]   ← hi" in lines
    (end,) = [line for line in lines if line.startswith("⇠ agent helper done")]
    assert end.startswith("⇠ agent helper done (2 turns, 44 tokens, cost unknown, ")
    assert "Echoing now" not in err + out, "its streamed words are not shown"
    # Its final reply is the result of the parent's agent call, shown as any result is.
    assert [line for line in err.splitlines() if "Child: it echoed" in line] == [
        "  ← Child: it echoed hi"]


def test_the_terminal_question_says_which_agent_asks() -> None:
    gate = TerminalGate()
    tty = io.StringIO()
    decision = gate._dialogue(PendingCall("c1", "r__echo", "r", "echo", {"text": "hi"},
                                          agent="helper (call_1)"), io.StringIO("n\n\n"), tty)
    assert not decision.approved
    assert tty.getvalue().startswith("\n? r wants to run echo for the agent helper (call_1) "
                                     "(not auto-approved)\n")


def test_the_agents_command_lists_agents_and_broken_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent_file("helper", HELPER)
    broken = agent_file("broken", "---\ndescription: [oops\n---\nBody.\n")
    config = tmp_path / "c.toml"
    config.write_text("", encoding="utf-8")
    assert main(["agents", "--config", str(config)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("2 agents the model may start with the agent tool")
    assert out[1] == "  general (builtin): model inherit, tools all"
    assert "  helper (user): model openai/child-model, tools r__echo" in out
    assert f"    {broken.parent / 'helper.md'}" in out
    assert out[-2] == "1 problem with agent files:"
    assert out[-1].startswith(f"  {broken}:3: bad frontmatter: expected ',' or ']'")
    broken.unlink()
    assert main(["agents", "--config", str(config)]) == 0


def test_a_task_of_only_invisible_characters_shows_no_line_and_breaks_nothing() -> None:
    """A model's ``agent`` call whose prompt cleaning leaves empty (a zero-width space, a
    bell, an escape sequence) is shown without its task, in the text output, over ACP and
    in a replayed session."""
    from tui_agent.acp.agent_calls import agent_title
    from tui_agent.acp.updates import replay
    from tui_agent.core.events import AgentStarted
    from tui_agent.headless.agent_lines import agent_line

    task = "\u200b\x07\x1b[2J"
    assert agent_line(AgentStarted("c1", "general", "m", task)) == "⇢ agent general (m): "
    assert agent_title({"prompt": task}) == "agent general"
    call = {"id": "c1", "type": "function",
            "function": {"name": "agent", "arguments": json.dumps({"prompt": task})}}
    shown = replay([{"role": "assistant", "content": "", "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "c1", "content": "done"}])
    assert shown[0].title == "agent general" and shown[0].kind == "think"
