"""The chat loop, end to end through litellm and the scripted server, with an
in-process tool source and a gate that records what it was asked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import model_for
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tui_agent.config.models import AgentSettings
from tui_agent.core import session as session_mod
from tui_agent.core.agent import Agent
from tui_agent.core.calls import repair_history
from tui_agent.core.events import (
    ApprovalDecided,
    ErrorOccurred,
    Event,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnDone,
)
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import Decision, PendingCall, Policy, ServerRules
from tui_agent.core.session import SessionWriter
from tui_agent.tools.local import LocalTools

pytestmark = pytest.mark.anyio
NUMBERS = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
           "required": ["a", "b"]}


class RecordingGate:
    """Answers from a script, in order, and remembers every call it was shown."""

    asks_person = True

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[PendingCall] = []

    async def decide(self, call: PendingCall) -> Decision:
        self.asked.append(call)
        return self.answers.pop(0) if self.answers else Decision.approve()


def calculator() -> LocalTools:
    tools = LocalTools()

    def add(a: int, b: int) -> str:
        return str(a + b)

    tools.add(add, description="Add two integers.", parameters=NUMBERS)
    return tools


def recording_calculator(ran: list[int]) -> LocalTools:
    """An ``add`` tool that notes each call in ``ran``: proof of whether it ran at all."""
    tools = LocalTools()

    def add(a: int, b: int) -> str:
        ran.append(a)
        return "ran"

    tools.add(add, parameters=NUMBERS)
    return tools


def make_agent(fake: FakeLLM, tools: LocalTools | None = None, gate: Any = None,
               **kwargs: Any) -> Agent:
    return Agent(LLM(model_for(fake)), tools or calculator(), gate or RecordingGate(), **kwargs)


async def run(agent: Agent, text: str = "go") -> list[Event]:
    return [e async for e in agent.run_turn(text)]


def finished(events: Sequence[Event]) -> TurnDone:
    """The last event, which must be the TurnDone."""
    assert isinstance(events[-1], TurnDone)
    return events[-1]


def of(events: Sequence[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


async def test_plain_turn(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Hi! How can I help?"))
    agent = make_agent(fake_llm, system_prompt="You are terse.")
    events = await run(agent, "hello")
    assert "".join(e.delta for e in of(events, TextDelta)) == "Hi! How can I help?"
    done = finished(events)
    assert done.reason == "end"
    assert done.usage.total_tokens > 0
    assert agent.messages == [{"role": "user", "content": "hello"},
                              {"role": "assistant", "content": "Hi! How can I help?"}]
    sent = fake_llm.requests[0]
    assert sent["messages"][0] == {"role": "system", "content": "You are terse."}
    assert [t["function"]["name"] for t in sent["tools"]] == ["local__add"]


async def test_tool_call_runs_and_result_is_fed_back(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": 2, "b": 3}, id="c1")]),
                  Reply(text="2 + 3 = 5"))
    gate = RecordingGate(Decision.approve())
    events = await run(make_agent(fake_llm, gate=gate), "add 2 and 3")
    started = of(events, ToolCallStarted)[0]
    assert (started.server, started.tool, started.arguments) == ("local", "add",
                                                                {"a": 2, "b": 3})
    assert of(events, ApprovalDecided)[0].decision == "approved"
    result = of(events, ToolResult)[0]
    assert (result.id, result.text, result.is_error) == ("c1", "5", False)
    assert gate.asked[0].arguments == {"a": 2, "b": 3}
    assert gate.asked[0].description == "Add two integers."
    assert tool_messages(fake_llm.requests[1]) == [
        {"role": "tool", "tool_call_id": "c1", "content": "5"}]
    assert finished(events).reason == "end"


async def test_auto_approved_tools_skip_the_gate(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": 1, "b": 1})]),
                  Reply(text="2"))
    gate = RecordingGate()
    policy = Policy({"local": ServerRules(auto=("add",))})
    events = await run(make_agent(fake_llm, gate=gate, policy=policy))
    assert gate.asked == []
    assert of(events, ApprovalDecided)[0].decision == "auto"


async def test_tools_outside_the_allow_list_are_not_offered(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": 1, "b": 1})]),
                  Reply(text="no"))
    policy = Policy({"local": ServerRules(allow=("read_*",))})
    gate = RecordingGate()
    events = await run(make_agent(fake_llm, gate=gate, policy=policy))
    assert "tools" not in fake_llm.requests[0]
    assert gate.asked == []
    assert "no tool named 'local__add'" in of(events, ToolResult)[0].text


async def test_parallel_calls_run_concurrently(fake_llm: FakeLLM) -> None:
    """Each call waits for the other to have started: run one after the other, they'd
    both time out."""
    tools = LocalTools()
    arrived: dict[str, asyncio.Event] = {"x": asyncio.Event(), "y": asyncio.Event()}

    async def meet(me: str, other: str) -> str:
        arrived[me].set()
        await arrived[other].wait()
        return f"{me} met {other}"

    tools.add(meet, parameters={"type": "object", "properties": {}}, timeout=5)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__meet", {"me": "x", "other": "y"}),
                                    FakeToolCall("local__meet", {"me": "y", "other": "x"})]),
                  Reply(text="done"))
    events = await run(make_agent(fake_llm, tools, RecordingGate()))
    assert sorted(r.text for r in of(events, ToolResult)) == ["x met y", "y met x"]
    assert [m["content"] for m in tool_messages(fake_llm.requests[1])] == ["x met y", "y met x"]


async def test_several_calls_are_asked_in_order(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": i, "b": 0}, id=f"c{i}")
                                    for i in range(3)]), Reply(text="ok"))
    gate = RecordingGate(Decision.approve(), Decision.deny("not that one"), Decision.approve())
    events = await run(make_agent(fake_llm, gate=gate))
    assert [c.id for c in gate.asked] == ["c0", "c1", "c2"]
    decisions = [(a.id, a.decision) for a in of(events, ApprovalDecided)]
    assert decisions == [("c0", "approved"), ("c1", "denied"), ("c2", "approved")]


async def test_denied_call_is_not_run_and_the_model_is_told(fake_llm: FakeLLM) -> None:
    ran: list[int] = []
    tools = recording_calculator(ran)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": 1, "b": 2})]),
                  Reply(text="understood"))
    gate = RecordingGate(Decision.deny("too risky"))
    events = await run(make_agent(fake_llm, tools, gate))
    assert ran == []
    assert of(events, ApprovalDecided)[0].reason == "too risky"
    told = tool_messages(fake_llm.requests[1])[0]["content"]
    assert "denied" in told and "too risky" in told
    assert finished(events).reason == "end"


async def test_unknown_tool_is_reported_and_the_turn_goes_on(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__multiply", {"a": 2, "b": 3})]),
                  Reply(text="I only have add."))
    gate = RecordingGate()
    events = await run(make_agent(fake_llm, gate=gate))
    assert gate.asked == []
    told = tool_messages(fake_llm.requests[1])[0]["content"]
    assert "no tool named 'local__multiply'" in told and "local__add" in told
    assert of(events, ToolResult)[0].is_error
    assert finished(events).reason == "end"
    started = of(events, ToolCallStarted)[0]
    assert started.server is None and started.to_json()["server"] is None


def test_a_made_up_name_gets_the_closest_real_ones() -> None:
    from tui_agent.core.calls import closest_names

    names = ["fs__read_file", "fs__write_file", "git__status", "git__log", "web__fetch"]
    assert closest_names("read_file", names)[0] == "fs__read_file"
    assert closest_names("files__read_file", names)[0] == "fs__read_file"
    assert closest_names("git__stat", names)[0] == "git__status"
    assert "fs__read_file" not in closest_names("weather__forecast", names)


@pytest.mark.parametrize("arguments", ['{"a": 2, "b": ', '[1, 2]'], ids=["truncated", "list"])
async def test_malformed_arguments_are_reported(fake_llm: FakeLLM, arguments: str) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", arguments)]),
                  Reply(text="Let me fix that."))
    gate = RecordingGate()
    events = await run(make_agent(fake_llm, gate=gate))
    assert gate.asked == []
    told = tool_messages(fake_llm.requests[1])[0]["content"]
    assert "arguments for 'local__add'" in told
    assert finished(events).reason == "end"


async def test_failing_and_hanging_tools_become_error_results(fake_llm: FakeLLM) -> None:
    tools = LocalTools()

    def broken() -> str:
        raise RuntimeError("disk on fire\x1b[2J")

    async def stuck() -> str:
        await asyncio.sleep(30)
        return "never"

    tools.add(broken)
    tools.add(stuck, timeout=0.2)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__broken"), FakeToolCall("local__stuck")]),
                  Reply(text="both failed"))
    events = await run(make_agent(fake_llm, tools, RecordingGate()))
    results = {r.text.split(":")[1].strip(): r for r in of(events, ToolResult)}
    assert results["local__broken failed"].is_error
    assert "disk on fire" in results["local__broken failed"].text
    assert "\x1b" not in results["local__broken failed"].text
    assert "within 0.2 s" in results["local__stuck did not finish within 0.2 s"].text
    assert finished(events).reason == "end"


async def test_max_depth_ends_the_turn_clearly(fake_llm: FakeLLM) -> None:
    fake_llm.push(*[Reply(tool_calls=[FakeToolCall("local__add", {"a": i, "b": 1},
                                                   id=f"d{i}")]) for i in range(3)])
    agent = make_agent(fake_llm, settings=AgentSettings(max_depth=2),
                       policy=Policy({"local": ServerRules(auto=("*",))}))
    events = await run(agent)
    error = of(events, ErrorOccurred)[0]
    assert error.kind == "max_depth" and "max_depth = 2" in error.message
    assert finished(events).reason == "max_depth"
    assert len(fake_llm.requests) == 2
    assert [r.text for r in of(events, ToolResult)] == ["1", "not run: the turn reached its "
                                                              "max_depth limit"]
    assert repair_history(agent.messages) == agent.messages  # every call answered


async def test_stream_cut_is_an_error_and_the_partial_is_kept(fake_llm: FakeLLM,
                                                              tmp_path: Path) -> None:
    fake_llm.push(Reply(text="Half of an answer that never", chunk_chars=5, cut_after=4))
    writer = SessionWriter.create(tmp_path / "s.jsonl", {"model": "m"})
    agent = make_agent(fake_llm, session=writer)
    events = await run(agent)
    assert of(events, ErrorOccurred)[0].kind == "stream_cut"
    assert finished(events).reason == "error"
    writer.close()
    conv = session_mod.load(tmp_path / "s.jsonl")
    assert conv.entries[-1].incomplete
    assert conv.entries[-1].message["content"] == "Half of an answ"  # role + 3 chunks


async def test_llm_error_ends_the_turn_with_an_event(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=401, error_message="bad key"))
    events = await run(make_agent(fake_llm))
    error = of(events, ErrorOccurred)[0]
    assert error.kind == "auth" and "bad key" in error.message
    assert finished(events).reason == "error"


async def test_cancel_mid_stream_keeps_partial_and_next_turn_works(fake_llm: FakeLLM,
                                                                    tmp_path: Path) -> None:
    fake_llm.push(Reply(text="slow " * 100, chunk_chars=5, delay=0.03), Reply(text="fresh"))
    writer = SessionWriter.create(tmp_path / "s.jsonl", {})
    agent = make_agent(fake_llm, session=writer)
    seen: list[str] = []

    async def consume() -> None:
        async for event in agent.run_turn("talk slowly"):
            if isinstance(event, TextDelta):
                seen.append(event.delta)

    task = asyncio.create_task(consume())
    while len(seen) < 3:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert agent.messages[-1]["content"].startswith("slow slow slow")
    events = await run(agent, "again")
    assert finished(events).reason == "end"
    writer.close()
    conv = session_mod.load(tmp_path / "s.jsonl")
    assert [e.incomplete for e in conv.entries] == [False, True, False, False]


async def test_cancel_during_a_tool_answers_every_call(fake_llm: FakeLLM) -> None:
    tools = LocalTools()
    started = asyncio.Event()

    async def forever() -> str:
        started.set()
        await asyncio.sleep(60)
        return "never"

    tools.add(forever, timeout=120)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__forever", {}, id="f1")]))
    agent = make_agent(fake_llm, tools, RecordingGate())
    gen = agent.run_turn("wait")
    task = asyncio.create_task(anext_all(gen))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert agent.messages[-1] == {"role": "tool", "tool_call_id": "f1",
                                  "content": "cancelled by the user before it finished"}


async def anext_all(gen: Any) -> None:
    async for _ in gen:
        pass


async def test_closing_the_generator_records_the_partial(fake_llm: FakeLLM) -> None:
    """A caller that stops iterating (aclose) instead of cancelling is handled too."""
    fake_llm.push(Reply(text="one two three four five", chunk_chars=4, delay=0.02))
    agent = make_agent(fake_llm)
    gen = agent.run_turn("count")
    async for event in gen:
        if isinstance(event, TextDelta):
            break
    await gen.aclose()
    assert agent.messages[-1]["role"] == "assistant"
    assert agent.messages[-1]["content"] == "one "


def test_repair_history_answers_orphaned_calls() -> None:
    calls = [{"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}},
             {"id": "b", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
    history: list[dict[str, Any]] = [{"role": "user", "content": "x"},
               {"role": "assistant", "content": None, "tool_calls": calls},
               {"role": "tool", "tool_call_id": "a", "content": "done"},
               {"role": "tool", "tool_call_id": "zzz", "content": "stray"},
               {"role": "user", "content": "y"}]
    repaired = repair_history(history)
    assert [m.get("tool_call_id") for m in repaired if m["role"] == "tool"] == ["a", "b"]
    assert repaired[-1] == {"role": "user", "content": "y"}
    assert json.dumps(repair_history(repaired)) == json.dumps(repaired)


async def test_empty_reply_is_kept_with_empty_content(fake_llm: FakeLLM) -> None:
    """Providers reject content null without tool calls: an empty answer is ''."""
    fake_llm.push(Reply(text=""), Reply(text="ok"))
    agent = make_agent(fake_llm)
    assert finished(await run(agent, "say nothing")).reason == "end"
    assert agent.messages[-1] == {"role": "assistant", "content": ""}
    await run(agent, "now something")
    assert fake_llm.requests[1]["messages"][1] == {"role": "assistant", "content": ""}


async def test_cut_before_any_text_records_nothing(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="x", tool_calls=[FakeToolCall("local__add", {"a": 1, "b": 2})],
                        cut_after=4, cut_clean=True))
    agent = make_agent(fake_llm)
    events = await run(agent)
    assert of(events, ErrorOccurred)[0].kind == "stream_cut"
    assert agent.messages[-1] == {"role": "assistant", "content": "x"}  # text kept, call not


async def test_a_failing_gate_denies(fake_llm: FakeLLM) -> None:
    class BrokenGate:
        asks_person = True

        async def decide(self, call: PendingCall) -> Decision:
            raise OSError("terminal went away")

    ran: list[int] = []
    tools = recording_calculator(ran)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": 1, "b": 2})]),
                  Reply(text="ok"))
    events = await run(make_agent(fake_llm, tools, BrokenGate()))
    assert ran == []
    approval = of(events, ApprovalDecided)[0]
    assert approval.decision == "denied" and "terminal went away" in (approval.reason or "")
    assert finished(events).reason == "end"


async def test_stopping_during_max_depth_refusals_still_answers_every_call(
        fake_llm: FakeLLM) -> None:
    """A caller that stops reading while the refused calls are being reported must not
    leave any of them unanswered in the history."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": i, "b": 1}, id=f"r{i}")
                                    for i in range(3)]))
    agent = make_agent(fake_llm, settings=AgentSettings(max_depth=1))
    gen = agent.run_turn("go")
    async for event in gen:
        if isinstance(event, ToolCallStarted):
            break  # stop at the first refused call
    await gen.aclose()
    answered = [m["tool_call_id"] for m in agent.messages if m["role"] == "tool"]
    assert answered == ["r0", "r1", "r2"]
    assert repair_history(agent.messages) == agent.messages
