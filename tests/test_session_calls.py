"""How each tool call ended is kept in the session file beside its result, so a resumed
conversation shows what happened (a failed script with its nested denied call, a denial
with its reason, a cancelled call, a duration), and an older file without it still loads.
The app's side of the round trip is ``tests/ui/test_resumed_cards.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tui_agent.core.events import ApprovalDecided, ToolCallStarted, ToolResult
from tui_agent.core.session import CallLog, SavedCall, SessionWriter, load
from tui_agent.core.session.calls import NESTED_TEXT

SCRIPT = 'print("adding")\nresult = calc.add(a=2, b=3) + 1\ncalc.echo(text="denied")'


def failed_script_session(fake_llm: FakeLLM, tmp_path: Path) -> Path:
    """``tui-agent run --code-mode --approve deny`` with a script whose second call is
    denied (so the script fails), its session in ``tmp_path / "s.jsonl"``."""
    from tests.test_agent_tools import fake_entry, write_config
    from tui_agent.cli import main

    config = write_config(tmp_path / "c.toml", calc=fake_entry(auto=["add"]))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("executeToolCode", {"code": SCRIPT},
                                                 id="s1")]),
                  Reply(text="the script stopped at echo"))
    session = tmp_path / "s.jsonl"
    assert main(["run", "--config", str(config), "--model", "openai/fake-model", "--api-base",
                 fake_llm.base_url, "--approve", "deny", "--code-mode", "--output", "jsonl",
                 "--session", str(session), "go"]) == 0
    return session


@pytest.mark.slow
def test_a_failed_script_and_its_nested_denied_call_are_kept(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conv = load(failed_script_session(fake_llm, tmp_path))
    capsys.readouterr()
    script = conv.calls["s1"]
    assert (script.status, script.approval) == ("failed", "auto")
    assert script.took is not None and script.took > 0
    assert [(c.id, c.name, c.status, c.approval, c.arguments) for c in script.calls] == [
        ("s1.1", "calc__add", "done", "auto", {"a": 2, "b": 3}),
        ("s1.2", "calc__echo", "denied", "denied", {"text": "denied"})]
    assert script.calls[0].text == "5"
    # what the model reads is as it was: the record sits beside the message, not in it
    tool = next(m for m in conv.messages if m["role"] == "tool")
    assert set(tool) == {"role", "tool_call_id", "content"}
    assert tool["content"].startswith("error (denied) at line 3")


def logged(*events: object) -> CallLog:
    log = CallLog()
    for event in events:
        log.saw(event)  # type: ignore[arg-type]
    return log


def test_every_ending_round_trips_through_the_file(tmp_path: Path) -> None:
    """done (with its duration), failed, denied with its reason, cancelled (no result came),
    a call that never reached the gate, and a script's calls with their own endings."""
    log = logged(
        ToolCallStarted("d", "t__now", "t", "now"), ApprovalDecided("d", "approved", "once"),
        ToolResult("d", False, "10:00", 0.42),
        ToolCallStarted("f", "t__diff", "t", "diff"), ApprovalDecided("f", "auto"),
        ToolResult("f", True, "error: bad revision", 1.5),
        ToolCallStarted("n", "fs__delete", "fs", "delete", {"path": "/"}),
        ApprovalDecided("n", "denied", "never the root"),
        ToolResult("n", True, "The user denied this call of fs__delete."),
        ToolCallStarted("c", "t__slow", "t", "slow"), ApprovalDecided("c", "auto"),
        ToolCallStarted("u", "made_up", None, "made_up"),
        ToolResult("u", True, "error: there is no tool named 'made_up'."),
        ToolCallStarted("s", "executeToolCode", "codemode", "executeToolCode", {"code": "x"}),
        ApprovalDecided("s", "auto"),
        ToolCallStarted("s.1", "t__big", "t", "big", {"n": 1}, parent="s"),
        ApprovalDecided("s.1", "auto"), ToolResult("s.1", False, "x" * (NESTED_TEXT + 5), 0.1),
        ToolCallStarted("s.2", "t__hang", "t", "hang", parent="s"),
        ApprovalDecided("s.2", "approved", "approved with s"))
    writer = SessionWriter.create(tmp_path / "e.jsonl", {"model": "m"})
    ids = ["d", "f", "n", "c", "u", "s"]
    writer.message({"role": "assistant", "content": "", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "x", "arguments": "{}"}}
        for i in ids]})
    for call_id in ids:
        writer.message({"role": "tool", "tool_call_id": call_id, "content": "r"},
                       call=log.saved(call_id))
    writer.close()
    calls = load(tmp_path / "e.jsonl").calls
    assert {i: (c.status, c.approval, c.reason, c.took) for i, c in calls.items()} == {
        "d": ("done", "approved", "once", 0.42), "f": ("failed", "auto", None, 1.5),
        "n": ("denied", "denied", "never the root", 0.0),
        "c": ("cancelled", "auto", None, None), "u": ("failed", None, None, 0.0),
        "s": ("cancelled", "auto", None, None)}
    big, hang = calls["s"].calls
    assert (big.status, big.took, len(big.text) < NESTED_TEXT + 100) == ("done", 0.1, True)
    assert big.text.endswith("5 more characters not kept in the session")
    assert (hang.id, hang.status, hang.approval, hang.reason) == (
        "s.2", "cancelled", "approved", "approved with s")


def test_a_file_without_the_record_or_with_a_bad_one_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    lines = [{"kind": "meta", "version": 1, "id": "old"},
             {"kind": "message", "seq": 0, "message": {"role": "user", "content": "hi"}},
             {"kind": "message", "seq": 1, "message": {"role": "tool", "tool_call_id": "a",
                                                       "content": "ok"}},
             {"kind": "message", "seq": 2, "message": {"role": "tool", "tool_call_id": "b",
                                                       "content": "ok"},
              "call": {"status": "exploded", "took": "soon"}},
             {"kind": "message", "seq": 3, "message": {"role": "tool", "tool_call_id": "c",
                                                       "content": "ok"},
              "call": {"status": "done", "calls": [{"status": "failed", "took": True}, 7]}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    conv = load(path)
    assert len(conv.messages) == 4 and conv.skipped_lines == 0
    assert conv.calls == {"c": SavedCall("done")}  # the unreadable nested ones left out


def test_a_secret_in_a_scripts_call_is_masked_in_the_file(tmp_path: Path) -> None:
    log = logged(ToolCallStarted("s", "executeToolCode", "codemode", "executeToolCode"),
                 ToolCallStarted("s.1", "t__login", "t", "login", {"key": "sk-SECRET-123"},
                                 parent="s"),
                 ToolResult("s.1", False, "logged in with sk-SECRET-123", 0.1),
                 ToolResult("s", False, "done", 0.2))
    writer = SessionWriter.create(tmp_path / "m.jsonl", {}, secrets=["sk-SECRET-123"])
    writer.message({"role": "tool", "tool_call_id": "s", "content": "done"},
                   call=log.saved("s"))
    writer.close()
    assert "sk-SECRET-123" not in (tmp_path / "m.jsonl").read_text()
