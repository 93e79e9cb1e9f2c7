"""The ``agent`` tool end to end: two scripted models on different ``api_base``s (the
sub-agent's requests reach its own), our MCP server over stdio whose tool the sub-agent
calls through the parent's gate (approved, and denied: the denial reaches the sub-agent),
the sub-agent's first request (its system prompt, its tools and the task: nothing of the
parent's conversation), its events tagged on the parent's stream, and its usage counted
in the parent's turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fake_server
from tests.fakes.llm_server import FakeLLM, FakeToolCall
from tests.hook_kit import guard, hooks_toml, seen
from tests.subagent_kit import (
    CHILD,
    CHILD_USAGE,
    HELPER,
    PARENT_USAGE,
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
from tests.test_agent import RecordingGate
from tui_agent.core.events import (
    AgentFinished,
    AgentStarted,
    AgentTag,
    ApprovalDecided,
    RoundUsage,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnDone,
)
from tui_agent.core.permissions import Decision
from tui_agent.tools.hub import Hub

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def models() -> Iterator[tuple[FakeLLM, FakeLLM]]:
    with two_models() as both:
        yield both


async def test_a_sub_agent_runs_on_its_own_model_behind_the_parents_gate(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply("Let me delegate.", [FakeToolCall("r__echo", {"text": "mine"}, id="p1"),
                                           call_agent("call_1", "Echo 'hi' please.", "helper")],
                      usage=PARENT_USAGE),
                reply("The helper says hi.", usage=PARENT_USAGE))
    child.push(reply(calls=[FakeToolCall("r__echo", {"text": "hi"}, id="c1")],
                     usage=CHILD_USAGE),
               reply("It echoed: hi", usage=CHILD_USAGE))
    agent_file("helper", HELPER)
    settings = config(tmp_path, parent, child)
    gate = RecordingGate(Decision.approve(), Decision.approve())
    hub = Hub({"r": fake_server()}, log_dir=tmp_path)
    hub.start()
    try:
        agent = parent_agent(settings, gate, hub, cwd=tmp_path)
        events = await turn(agent, "Secret parent words: do not leak")
    finally:
        await hub.close()
    # The figure: the sub-agent's first request is its system prompt, its tools and the
    # task; nothing of the parent's conversation.
    first = child.requests[0]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    system = first["messages"][0]["content"]
    system = system if isinstance(system, str) else system[0]["text"]
    assert system.startswith("You are the helper. Echo what you are asked to, then report.")
    assert "Environment:" in system
    assert first["messages"][1]["content"] in ("Echo 'hi' please.",
                                               [{"type": "text", "text": "Echo 'hi' please."}])
    assert "Secret parent words" not in str(first)
    assert tool_names(first) == {"r__echo"}, "its file's tools, and no agent tool (depth 1)"
    assert first["model"] == "child-model" and len(child.requests) == 2
    assert len(parent.requests) == 2 and "agent" in tool_names(parent.requests[0])
    # Its call asked the parent's gate, saying who asks; so did the parent's own.
    assert [(c.tool, c.agent) for c in gate.asked] == [("echo", None),
                                                       ("echo", "helper (call_1)")]
    # The parent's model reads the final reply and one line of the tools it called.
    assert tool_message(parent.requests[1], "call_1") == (
        "It echoed: hi\n\n[the agent 'helper' called: r__echo]")
    tag = AgentTag("call_1", "helper")
    started = next(e for e in events if isinstance(e, AgentStarted))
    assert (started.id, started.name, started.model, started.task, started.agent) == (
        "call_1", "helper", CHILD, "Echo 'hi' please.", None)
    inner = [e for e in events if e.agent == tag]
    assert any(isinstance(e, ToolCallStarted) and e.id == "c1" for e in inner)
    assert any(isinstance(e, ApprovalDecided) and e.id == "c1" for e in inner)
    assert any(isinstance(e, ToolResult) and e.id == "c1" and e.text == "hi" for e in inner)
    assert "".join(e.delta for e in inner if isinstance(e, TextDelta)) == "It echoed: hi"
    assert not any(isinstance(e, TurnDone) for e in inner), "its TurnDone is AgentFinished"
    rounds = [e.usage for e in inner if isinstance(e, RoundUsage)]
    assert [u.total_tokens for u in rounds] == [CHILD_USAGE["total_tokens"]] * 2, \
        "each of its requests is told as it ends (its card's live count)"
    assert not any(isinstance(e, RoundUsage) for e in events if e.agent is None), \
        "the parent's own turn tells none"
    finished = next(e for e in events if isinstance(e, AgentFinished))
    assert (finished.status, finished.turns, finished.tools) == ("done", 2, ("r__echo",))
    assert finished.usage.total_tokens == 2 * CHILD_USAGE["total_tokens"]
    # The order a front end relies on: the agent call starts, then agent_start, ...,
    # agent_end, then the call's result.
    order = [(type(e).__name__, getattr(e, "id", "")) for e in events if e.agent is None]
    assert order.index(("ToolCallStarted", "call_1")) < order.index(("AgentStarted", "call_1"))
    assert order.index(("AgentFinished", "call_1")) < order.index(("ToolResult", "call_1"))
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "end"
    assert done.usage.total_tokens == (2 * PARENT_USAGE["total_tokens"]
                                       + 2 * CHILD_USAGE["total_tokens"])


async def test_a_denial_goes_back_to_the_sub_agent_and_the_turn_goes_on(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("call_9", "Echo it.", "helper")]),
                reply("Done anyway."))
    child.push(reply(calls=[FakeToolCall("r__echo", {"text": "no"}, id="c1")]),
               reply("I was not allowed to echo."))
    agent_file("helper", HELPER)
    gate = RecordingGate(Decision.deny("not today"))
    hub = Hub({"r": fake_server()}, log_dir=tmp_path)
    hub.start()
    try:
        agent = parent_agent(config(tmp_path, parent, child), gate, hub, cwd=tmp_path)
        events = await turn(agent, "go")
    finally:
        await hub.close()
    assert [c.agent for c in gate.asked] == ["helper (call_9)"]
    denied = tool_message(child.requests[1], "c1")
    assert "The user denied this call of r__echo. Reason: not today." in denied
    assert tool_message(parent.requests[1], "call_9").startswith("I was not allowed to echo.")
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"


async def test_the_general_agent_inherits_the_parents_model_and_tools(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("g1", "Look around.")]),
                reply("Report read: nothing here."), reply("nothing here"))
    hub = Hub({"r": fake_server()}, log_dir=tmp_path)
    hub.start()
    try:
        agent = parent_agent(config(tmp_path, parent, child), RecordingGate(), hub,
                             cwd=tmp_path)
        assert [d.name for d in agent.subagents.definitions()] == ["general"]
        events = await turn(agent, "go")
    finally:
        await hub.close()
    # Requests on the parent's server: the parent's, then the sub-agent's, then the parent's.
    sub = parent.requests[1]
    assert [m["role"] for m in sub["messages"]] == ["system", "user"]
    assert "sub-agent of tui-agent" in str(sub["messages"][0])
    assert tool_names(sub) >= {"r__echo", "r__add"} and "agent" not in tool_names(sub)
    assert child.requests == []
    started = next(e for e in events if isinstance(e, AgentStarted))
    assert (started.name, started.model) == ("general", "openai/parent-model")


async def test_the_parents_hooks_judge_the_sub_agents_calls_and_only_those(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    """A ``PreToolUse`` hook blocks the sub-agent's call as it would the parent's (the
    reason reaches the sub-agent); its task fires no ``UserPromptSubmit``."""
    parent, child = models
    parent.push(reply(calls=[call_agent("h1", "Echo the forbidden word.", "helper")]),
                reply("ok"))
    child.push(reply(calls=[FakeToolCall("r__echo", {"text": "forbidden"}, id="c1")]),
               reply("The hook stopped me."))
    agent_file("helper", HELPER)
    script = guard(tmp_path)
    extra = (hooks_toml("PreToolUse", str(script), "mcp__r__echo")
             + hooks_toml("UserPromptSubmit", str(script)))
    hub = Hub({"r": fake_server()}, log_dir=tmp_path)
    hub.start()
    try:
        agent = parent_agent(config(tmp_path, parent, child, extra), RecordingGate(), hub,
                             cwd=tmp_path)
        await turn(agent, "go")
    finally:
        await hub.close()
    assert [(s["hook_event_name"], s.get("tool_name")) for s in seen(tmp_path)] == [
        ("UserPromptSubmit", None), ("PreToolUse", "mcp__r__echo")]
    assert "Blocked: the input mentions a forbidden word" in tool_message(child.requests[1],
                                                                          "c1")


async def test_with_no_tool_and_no_agent_file_no_agent_tool_is_sent(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    """The built-in general agent alone, with no server's tool, would be the same model
    without tools: nothing is offered, so a model that takes no tools still works. An
    agent file (its own prompt, maybe its own model) or a server's tool brings it back."""
    parent, child = models
    settings = config(tmp_path, parent, child)
    bare = parent_agent(settings, RecordingGate(), cwd=tmp_path)
    assert bare.request().tools == []
    agent_file("helper", HELPER)
    with_file = parent_agent(settings, RecordingGate(), cwd=tmp_path)
    assert [t["function"]["name"] for t in with_file.request().tools] == ["agent"]
