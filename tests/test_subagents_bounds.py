"""Sub-agents within bounds: several at once up to ``[agents] max_parallel`` (the others
wait, and say so), one stopped by id, all stopped with the parent's turn (each still
answered), ``max_turns``, the depth bound, and bad input (an unknown agent, tools that
match nothing, an unknown model): each named, and the parent's turn goes on."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.subagent_kit import (
    CHILD,
    agent_file,
    call_agent,
    config,
    parent_agent,
    reply,
    tool_message,
    tool_names,
    turn,
    two_models,
)
from tests.test_agent import RecordingGate, calculator
from tui_agent.core.agent import Agent
from tui_agent.core.events import AgentFinished, AgentTag, Event, Notice, TurnDone
from tui_agent.core.session import SavedAgent, load
from tui_agent.wiring import build

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SLOW = f"---\ndescription: Slow worker\nmodel: {CHILD}\n---\nWork slowly.\n"


@pytest.fixture
def models() -> Iterator[tuple[FakeLLM, FakeLLM]]:
    with two_models() as both:
        yield both


def endings(events: list[Event]) -> dict[str, AgentFinished]:
    return {e.id: e for e in events if isinstance(e, AgentFinished)}


async def test_parallel_agents_wait_for_a_slot_and_say_so(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent(f"a{i}", f"task {i}", "slow") for i in range(3)]),
                reply("all three reported"))
    for _ in range(3):
        child.push(Reply(text="report", delay=0.05))
    agent_file("slow", SLOW)
    settings = config(tmp_path, parent, child, "[agents]\nmax_parallel = 2\n")
    agent = parent_agent(settings, RecordingGate(), cwd=tmp_path)
    events = await turn(agent, "go")
    assert {k: e.status for k, e in endings(events).items()} == {
        "a0": "done", "a1": "done", "a2": "done"}
    waiting = [e for e in events if isinstance(e, Notice) and e.message.startswith("waiting")]
    assert [e.agent for e in waiting] == [AgentTag("a2", "slow")]
    assert waiting[0].message == ("waiting: 2 sub-agents are running ([agents] "
                                  "max_parallel = 2)")
    assert {tool_message(parent.requests[1], f"a{i}") for i in range(3)} == {
        "report\n\n[the agent 'slow' called no tools]"}


async def _until(check: object, what: str, seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.02)


async def _consume(agent: Agent, prompt: str, into: list[Event]) -> None:
    async for event in agent.run_turn(prompt):
        into.append(event)


async def test_one_agent_is_stopped_by_id_and_the_others_go_on(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("s1", "never ends", "slow"),
                             call_agent("s2", "quick one")]),
                reply("quick report"),  # the general agent's, on the parent's model
                reply("one stopped, one reported"))
    child.push(Reply(text="half an answer", hang=True, chunk_chars=100))
    agent_file("slow", SLOW)
    agent = parent_agent(config(tmp_path, parent, child), RecordingGate(), cwd=tmp_path)
    assert agent.subagents.stop("s1") is False, "nothing runs under that id yet"
    events: list[Event] = []
    task = asyncio.create_task(_consume(agent, "go", events))
    try:
        await _until(lambda: len(child.requests) == 1 and "s2" in endings(events),
                     "the slow agent asked its model")
        assert agent.subagents.stop("s1") is True
        await asyncio.wait_for(task, 60)
    finally:
        task.cancel()
    ended = endings(events)
    assert (ended["s1"].status, ended["s1"].reason) == ("stopped", "stopped before it finished")
    assert ended["s2"].status == "done"
    said = tool_message(parent.requests[2], "s1")
    assert said.startswith("The agent 'slow' was stopped: stopped before it finished. What "
                           "it had:\n")
    assert tool_message(parent.requests[2], "s2").startswith("quick report")
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"
    assert agent.subagents.stop("s1") is False, "it ended"


async def test_a_waiting_agent_is_stopped_before_it_starts(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("w1", "first", "slow"), call_agent("w2", "second",
                                                                           "slow")]),
                reply("both stopped"))
    child.push(Reply(hang=True))
    agent_file("slow", SLOW)
    settings = config(tmp_path, parent, child, "[agents]\nmax_parallel = 1\n")
    agent = parent_agent(settings, RecordingGate(), cwd=tmp_path)
    events: list[Event] = []
    task = asyncio.create_task(_consume(agent, "go", events))
    try:
        await _until(lambda: len(child.requests) == 1 and any(
            isinstance(e, Notice) and e.agent is not None for e in events), "one waits")
        waiting = next(e.agent.id for e in events if isinstance(e, Notice) and e.agent)
        running = "w1" if waiting == "w2" else "w2"
        assert agent.subagents.stop(waiting) is True
        await _until(lambda: waiting in endings(events), "the waiting one ended")
        assert agent.subagents.stop(running) is True
        await asyncio.wait_for(task, 60)
    finally:
        task.cancel()
    assert {k: e.status for k, e in endings(events).items()} == {"w1": "stopped",
                                                                 "w2": "stopped"}
    assert len(child.requests) == 1, "the waiting one never asked its model"
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"


async def test_cancelling_the_turn_stops_every_agent_and_each_is_answered(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("x1", "one", "slow"), call_agent("x2", "two", "slow")]))
    child.push(Reply(hang=True), Reply(hang=True))
    agent_file("slow", SLOW)
    agent = parent_agent(config(tmp_path, parent, child), RecordingGate(), cwd=tmp_path)
    events: list[Event] = []
    task = asyncio.create_task(_consume(agent, "go", events))
    await _until(lambda: len(child.requests) == 2, "both asked their model")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 60)
    answers = {m["tool_call_id"]: m["content"] for m in agent.messages if m["role"] == "tool"}
    assert set(answers) == {"x1", "x2"}
    for text in answers.values():
        assert text.startswith("The agent 'slow' was stopped: stopped before it finished.")
    assert agent.subagents.tree.running == {}


async def test_a_looping_agent_stops_at_max_turns_with_what_it_had(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("m1", "loop", "looper")]), reply("it looped"))
    child.push(reply("Trying once.", [FakeToolCall("nothing__here", {}, id="l1")]),
               reply("Trying twice.", [FakeToolCall("nothing__here", {}, id="l2")]))
    agent_file("looper", f"---\ndescription: Loops\nmodel: {CHILD}\nmaxTurns: 2\n---\nLoop.\n")
    settings = config(tmp_path, parent, child)
    writer = build.new_session(settings, "openai/parent-model", tmp_path / "s" / "conv.jsonl")
    agent = parent_agent(settings, RecordingGate(), session=writer, cwd=tmp_path)
    events = await turn(agent, "go")
    writer.close()
    ended = endings(events)["m1"]
    assert (ended.status, ended.turns) == ("max_turns", 2)
    assert ended.reason == "it was still calling tools after 2 model round trips (max_turns = 2)"
    assert tool_message(parent.requests[1], "m1") == (
        "The agent 'looper' hit its max_turns: it was still calling tools after 2 model "
        "round trips (max_turns = 2). What it had:\nTrying twice.\n\n"
        "[the agent 'looper' called: nothing__here]")
    assert len(child.requests) == 2 and events[-1].reason == "end"  # type: ignore[attr-defined]
    saved = load(writer.path).calls["m1"].agent  # what the session keeps: a resumed card
    assert saved is not None and saved.reason == ended.reason  # says why, as the live one
    assert "reason" not in SavedAgent("x", "m", "done").record()


async def test_bad_calls_are_named_and_the_turn_goes_on(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("u1", "x", "nope"), call_agent("u2", "x", "picky"),
                             call_agent("u3", "x", "ghost"), call_agent("u4", "")]),
                reply("noted"))
    child.push(Reply(status=404, error_message="The model `ghost` does not exist"))
    agent_file("picky", "---\ndescription: Picky\ntools: zz__*, mcp__qq__*\n---\nP.\n")
    agent_file("ghost", "---\ndescription: Ghost\nmodel: openai/ghost\n---\nG.\n")
    extra = f'[models."openai/ghost"]\napi_base = "{child.base_url}"\nmax_retries = 0\n'
    agent = parent_agent(config(tmp_path, parent, child, extra), RecordingGate(),
                         cwd=tmp_path)
    events = await turn(agent, "go")
    said = {i: tool_message(parent.requests[1], f"u{i}") for i in range(1, 5)}
    assert said[1] == "error: no agent named 'nope'. The agents are: general, ghost, picky"
    assert said[2].startswith("error: the agent 'picky' has no tool to work with: its tools "
                              "(zz__*, mcp__qq__*) match none of the tools on offer (defined "
                              "in ")
    assert said[3].startswith("The agent 'ghost' failed: ") and "does not exist" in said[3]
    assert said[4].startswith('error: agent takes {"prompt": "<the task>"}')
    assert endings(events)["u3"].status == "failed"
    assert set(endings(events)) == {"u3"}, "the others never started"
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"


@pytest.mark.parametrize("depth", [0, 2])
async def test_the_depth_bound_decides_who_has_the_agent_tool(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path, depth: int) -> None:
    parent, child = models
    if depth:
        parent.push(reply(calls=[call_agent("d1", "nested", "slow")]), reply("ok"))
        child.push(reply("leaf"))
    else:
        parent.push(reply("no agents here"))
    agent_file("slow", SLOW)
    agent = parent_agent(config(tmp_path, parent, child, f"[agents]\nmax_depth = {depth}\n"),
                         RecordingGate(), cwd=tmp_path)
    await turn(agent, "go")
    assert ("agent" in tool_names(parent.requests[0])) is bool(depth)
    if depth:
        assert "agent" in tool_names(child.requests[0]), "depth 2: a sub-agent may delegate"


async def test_a_sub_agents_own_sub_agent_gets_no_tool_its_file_left_out(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    """With max_depth 2, an agent whose file disallows a tool starts the general agent:
    that one works inside its parent's view, so the tool is not offered to it either."""
    parent, child = models
    parent.push(reply(calls=[call_agent("o1", "delegate", "limited")]), reply("ok"))
    child.push(reply(calls=[call_agent("g1", "do it")]), reply("done inside"),
               reply("done"))
    agent_file("limited", f"---\ndescription: d\nmodel: {CHILD}\n"
                          "disallowedTools: mcp__local__add\n---\nDelegate.\n")
    agent = parent_agent(config(tmp_path, parent, child, "[agents]\nmax_depth = 2\n"),
                         RecordingGate(), calculator(), cwd=tmp_path)
    await turn(agent, "go")
    assert "local__add" in tool_names(parent.requests[0])
    assert tool_names(child.requests[0]) == {"agent"}, "limited: not add"
    inner = child.requests[1]  # general inherits its parent's model: limited's
    assert [m["role"] for m in inner["messages"]] == ["system", "user"]
    assert "local__add" not in tool_names(inner), "nor its own sub-agent"
