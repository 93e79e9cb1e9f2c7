"""``tui-agent run --mode`` end to end, through the command line's entry point, the
scripted model and real MCP servers (the built-in ``local`` server, whose tools carry
``readOnlyHint``; tests/fakes/mcp_server.py): in plan mode a read-only tool runs, an edit
is refused without a question (even with ``--approve auto``), the model is told it is in
plan mode with the message and reads the refusal; in auto mode a tool that would ask
runs (even with ``--approve deny``); ``--mode`` wins over ``[permissions] default_mode``;
the JSONL ``approval`` event and the session file say what decided each call (``by``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FAKE_MODEL
from tests.e2e_kit import entry_point, local_config, ok, run, write_config
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project
from tui_agent.core.permissions.modes import PLAN_PROMPT, PLAN_REFUSAL

_ = entry_point
pytestmark = pytest.mark.slow

README = "# Demo\nA tool that says hello.\n"


def test_run_in_plan_mode_reads_and_refuses_the_edit_without_asking(
        tmp_path: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    project = local_project(tmp_path, monkeypatch, {"README.md": README})
    config = local_config(tmp_path, fake_llm.base_url)
    fake_llm.push(Reply(tool_calls=[
        FakeToolCall("local__read", {"path": "README.md"}, id="r"),
        FakeToolCall("local__edit", {"path": "README.md", "old_string": "hello",
                                     "new_string": "bye"}, id="e")]),
        Reply(text="Plan: change hello to bye in README.md."))
    result = ok(run(capsys, config, "say bye instead", "--mode", "plan"))  # --approve auto
    decided = {e["id"]: (e["decision"], e.get("by")) for e in result.of("approval")}
    assert decided == {"r": ("auto", "the auto list of local"), "e": ("denied", "plan mode")}
    assert (project / "README.md").read_text() == README
    sent = fake_llm.requests[0]["messages"][-1]["content"]
    assert sent.startswith("say bye instead") and PLAN_PROMPT in sent
    assert PLAN_PROMPT not in (fake_llm.requests[0]["messages"][0].get("content") or "")
    answers = {m["tool_call_id"]: m["content"] for m in fake_llm.requests[1]["messages"]
               if m["role"] == "tool"}
    assert "# Demo" in answers["r"] and PLAN_REFUSAL in answers["e"]
    calls = result.conversation().calls
    assert (calls["e"].approval, calls["e"].by) == ("denied", "plan mode")
    assert calls["r"].by == "the auto list of local"


def test_auto_mode_runs_what_would_ask_even_with_approve_deny(
        tmp_path: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path / "c.toml", FAKE_MODEL, fake_llm.base_url,
                          api_key="sk-test-key")
    with config.open("a") as f:
        f.write('\n[permissions]\ndefault_mode = "plan"\n')
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__add", {"a": 2, "b": 3}, id="a")]),
                  Reply(text="5"))
    result = ok(run(capsys, config, "add 2 and 3", "--mode", "auto", "--approve", "deny"))
    assert [(e["decision"], e["by"]) for e in result.of("approval")] == [("auto", "auto mode")]
    assert [r["text"] for r in result.of("tool_result")] == ["5"]
    assert PLAN_PROMPT not in fake_llm.requests[0]["messages"][-1]["content"]


def test_approve_deny_answers_what_the_default_mode_asks(
        tmp_path: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a mode, the flag answers the question: ``by`` says so."""
    config = write_config(tmp_path / "c.toml", FAKE_MODEL, fake_llm.base_url,
                          api_key="sk-test-key")
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__add", {"a": 2, "b": 3}, id="a")]),
                  Reply(text="denied"))
    result = ok(run(capsys, config, "add 2 and 3", "--approve", "deny"))
    [approval] = result.of("approval")
    assert (approval["decision"], approval["by"]) == ("denied", "--approve deny")


def test_a_mode_that_does_not_exist_is_a_usage_error(
        tmp_path: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path / "c.toml", FAKE_MODEL, fake_llm.base_url, server=False)
    with pytest.raises(SystemExit) as ended:
        run(capsys, config, "hi", "--mode", "yolo")
    assert ended.value.code == 2
    assert "argument --mode: invalid choice: 'yolo' (choose from 'default', 'plan', 'auto')" \
        in capsys.readouterr().err
