"""The whole path: a scripted model, the real chat loop, the policy and gate, the hub,
and our MCP server over stdio; and the same from the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import tomlkit

from tests.conftest import ROOT, fake_server, model_for, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_agent import RecordingGate
from tests.zygote import module
from tui_agent.cli import main
from tui_agent.config.models import AgentSettings
from tui_agent.core.agent import Agent
from tui_agent.core.events import ApprovalDecided, Event, Notice, ToolResult
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import Decision, Policy, ServerRules
from tui_agent.core.session import SessionStore, SessionWriter
from tui_agent.tools.hub import Hub

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def run_turn(agent: Agent, prompt: str) -> list[Event]:
    return [event async for event in agent.run_turn(prompt)]


async def test_a_changed_tool_asks_again_and_says_why(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("r__echo", {"text": "one"}, id="c1")]),
                  Reply(tool_calls=[FakeToolCall("r__rug", {}, id="c2")]),
                  Reply(text="changed it"))
    gate = RecordingGate(Decision.deny("no"))
    hub = Hub({"r": fake_server()}, log_dir=tmp_path)
    hub.start()
    try:
        agent = Agent(LLM(model_for(fake_llm)), hub, gate,
                      policy=Policy({"r": ServerRules(auto=["echo", "rug"])}))
        events = await run_turn(agent, "go")
        assert [e.decision for e in events if isinstance(e, ApprovalDecided)] == ["auto", "auto"]
        # It waited for the server (its tools went with the first request), and said so
        # if the start took longer than a moment (Hub's NOTE_AFTER).
        notes = [e.message for e in events if isinstance(e, Notice)]
        assert notes == [] or (len(notes) == 1 and re.fullmatch(
            r"waiting for 1 MCP server\(s\) still starting: r \(up to \d+ s\)", notes[0])), notes
        tools = fake_llm.requests[0]["tools"]
        assert "r__echo" in {t["function"]["name"] for t in tools}
        for _ in range(50):  # the list_changed refresh is debounced
            if "IGNORE" in {s.name: s for s in hub.specs()}["r__echo"].description:
                break
            await __import__("asyncio").sleep(0.1)
        fake_llm.push(Reply(tool_calls=[FakeToolCall("r__echo", {"text": "two"}, id="c3")]),
                      Reply(text="ok"))
        events = await run_turn(agent, "again")
        assert [e.decision for e in events if isinstance(e, ApprovalDecided)] == ["denied"]
        asked = gate.asked[0]
        assert asked.tool == "echo" and "changed since it was allowed" in asked.why
        assert "IGNORE PREVIOUS" in asked.description
    finally:
        await hub.close()


async def test_a_huge_result_is_capped_for_the_model_and_kept_whole(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("b__big", {"size": 10_000_000}, id="big1")]),
                  Reply(text="that was big"))
    store = SessionStore(tmp_path / "sessions")
    writer = SessionWriter.create(store.new_path(), {})
    hub = Hub({"b": fake_server()}, log_dir=tmp_path)
    hub.start()
    try:
        agent = Agent(LLM(model_for(fake_llm)), hub, RecordingGate(), session=writer,
                      # 10 MB through stdio took past the default 60 s next to a busy suite
                      settings=AgentSettings(max_tool_output=1000, tool_timeout=600))
        events = await run_turn(agent, "big please")
    finally:
        await hub.close()
        writer.close()
    result = next(e for e in events if isinstance(e, ToolResult))
    sent = fake_llm.requests[1]["messages"][-1]["content"]
    assert len(sent) < 4_300 and sent == result.text
    assert "[output cut: the first 4,000 of 10,000,000 characters" in sent
    saved = writer.path.with_suffix(".results") / "big1.txt"
    assert str(saved) in sent
    assert saved.stat().st_size == 10_000_000


def write_config(path: Path, **servers: dict[str, object]) -> Path:
    doc = tomlkit.document()
    table = tomlkit.table()
    for name, server in servers.items():
        table[name] = server
    doc["servers"] = table
    path.write_text(tomlkit.dumps(doc))
    return path


def fake_entry(*args: str, **more: object) -> dict[str, object]:
    command, *argv = module("tests.fakes.mcp_server", *args)
    return {"command": command, "args": argv, "cwd": str(ROOT), "env": tagged_env(), **more}


def test_headless_run_calls_mcp_tools(fake_llm: FakeLLM, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path / "c.toml", calc=fake_entry(auto=["add"]))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("calc__add", {"a": 2, "b": 3}, id="a1"),
                                    FakeToolCall("calc__echo", {"text": "hi"}, id="e1")]),
                  Reply(text="2 + 3 = 5"))
    code = main(["run", "--config", str(config), "--model", "openai/fake-model",
                 "--api-base", fake_llm.base_url, "--approve", "deny", "--output", "jsonl",
                 "add them"])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    by_type = {t: [e for e in events if e["type"] == t] for t in {e["type"] for e in events}}
    assert [(e["name"], e["server"], e["tool"]) for e in by_type["tool_call"]] == [
        ("calc__add", "calc", "add"), ("calc__echo", "calc", "echo")]
    assert [e["decision"] for e in by_type["approval"]] == ["auto", "denied"]
    results = {e["id"]: e for e in by_type["tool_result"]}
    assert results["a1"]["text"] == "5" and not results["a1"]["is_error"]
    assert results["e1"]["is_error"]
    assert by_type["done"][0]["reason"] == "end"
    offered = {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    assert {"calc__add", "calc__echo", "calc__crash"} <= offered


def test_servers_command_reports_and_fails_on_a_broken_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_config(tmp_path / "good.toml", calc=fake_entry(auto=["add"], deny=["crash"]))
    assert main(["servers", "--config", str(good), "--resources"]) == 0
    out = capsys.readouterr().out
    assert "calc  connected  stdio  16 tools + 2 to read its resources" in out
    assert "  calc__read_resource " in out and "  calc__list_resources " in out
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()
             if line.startswith("  calc__")}
    assert (lines["calc__add"], lines["calc__echo"], lines["calc__crash"]) == (
        "auto", "ask", "deny")
    assert "fake://hello" in out and "greet(name)" in out
    bad = write_config(tmp_path / "bad.toml", calc=fake_entry(),
                       broken=fake_entry("--slow-start", "30", startup_timeout=0.5))
    assert main(["servers", "--config", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "broken  failed" in out
    assert "did not start within 0.5 s" in out
