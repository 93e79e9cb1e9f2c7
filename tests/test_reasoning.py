"""Reasoning models through litellm: the thinking streams as its own event before the
text, is kept for the display (history, session file, resume) but never sent back as
text, Anthropic's thinking blocks go back whole and signed (the rule that broke every
tool turn with thinking on), also after compaction cuts the history, and
``reasoning_effort`` reaches only models that can reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import model_for
from tests.fakes.anthropic_server import AnthropicFake, ToolUse
from tests.fakes.anthropic_server import Reply as AReply
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.providers import anthropic_fake
from tests.test_agent import NUMBERS, calculator
from tui_agent.config.models import AgentSettings, ModelSettings
from tui_agent.core.agent import Agent
from tui_agent.core.events import (
    Compacted,
    ErrorOccurred,
    Event,
    Notice,
    ReasoningDelta,
    TextDelta,
    TurnDone,
)
from tui_agent.core.llm import LLM
from tui_agent.core.llm import Reply as LLMReply
from tui_agent.core.permissions import ApproveAll
from tui_agent.core.session import SessionWriter, load
from tui_agent.tools.local import LocalTools

_ = anthropic_fake
pytestmark = pytest.mark.anyio


def claude(stub: AnthropicFake, **overrides: Any) -> LLM:
    values: dict[str, Any] = {"name": "anthropic/claude-sonnet-4-5", "api_base": stub.base_url,
                              "api_key": "sk-ant-test", "max_retries": 0, "timeout": 20,
                              "reasoning_effort": "medium"}
    values.update(overrides)
    return LLM(ModelSettings(**values))


async def run(agent: Agent, text: str = "go") -> list[Event]:
    return [e async for e in agent.run_turn(text)]


def assistant_blocks(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The content blocks of each assistant message of an Anthropic request body."""
    return [m["content"] for m in body["messages"]
            if m["role"] == "assistant" and isinstance(m["content"], list)]


async def test_reasoning_streams_first_is_kept_and_is_not_sent_back(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(reasoning="I should add them.", chunk_chars=5,
                        tool_calls=[FakeToolCall("local__add", {"a": 2, "b": 3}, id="c1")]),
                  Reply(reasoning="Now answer.", text="It is 5."))
    path = tmp_path / "20260101-000000-abcdef.jsonl"
    session = SessionWriter.create(path, {})
    agent = Agent(LLM(model_for(fake_llm)), calculator(), ApproveAll(), session=session)
    events = await run(agent)
    session.close()
    streamed = [e for e in events if isinstance(e, ReasoningDelta | TextDelta)]
    assert "".join(e.delta for e in streamed if isinstance(e, ReasoningDelta)) == \
        "I should add them.Now answer."
    assert len([e for e in streamed if isinstance(e, ReasoningDelta)]) == 4 + 3  # as it streamed
    kinds = [type(e).__name__ for e in streamed]
    assert kinds.index("TextDelta") > kinds.index("ReasoningDelta")
    # in order: the second reply's reasoning came before its text
    last_reasoning = max(i for i, e in enumerate(streamed) if isinstance(e, ReasoningDelta))
    first_text = min(i for i, e in enumerate(streamed) if isinstance(e, TextDelta))
    assert last_reasoning < first_text
    # the second request carries the first reply, without the reasoning text
    sent = fake_llm.requests[1]["messages"]
    replied = [m for m in sent if m["role"] == "assistant"]
    assert replied and all("reasoning_content" not in m and "thinking_blocks" not in m
                           for m in replied)
    # kept for the display: history, session file, resume
    kept = [m for m in agent.messages if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in kept] == ["I should add them.", "Now answer."]
    loaded = load(path)
    assert [m.get("reasoning_content") for m in loaded.messages
            if m["role"] == "assistant"] == ["I should add them.", "Now answer."]
    resumed = Agent(LLM(model_for(fake_llm)), calculator(), ApproveAll(),
                    history=loaded.messages)
    assert resumed.messages[-1]["reasoning_content"] == "Now answer."


async def test_a_reply_stopped_mid_text_keeps_its_reasoning(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(reasoning="Plan: say hello.", text="Hello there, friend.",
                        chunk_chars=4, delay=0.02))
    agent = Agent(LLM(model_for(fake_llm)), calculator(), ApproveAll())
    turn = agent.run_turn("hi")
    async for event in turn:
        if isinstance(event, TextDelta):
            break
    await turn.aclose()
    kept = agent.messages[-1]
    assert kept["role"] == "assistant" and kept["content"] == "Hell"
    assert kept["reasoning_content"] == "Plan: say hello."


async def test_tool_call_ids_are_kept_and_handed_to_litellm_verbatim(
        fake_llm: FakeLLM) -> None:
    """Gemini 3's thought signature rides inside the call id: the history and the request
    handed to litellm keep it intact (litellm itself takes it off for other providers)."""
    call_id = "call_9f2e__thought__CiQBjz1rX+/abc=="
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", {"a": 1, "b": 2}, id=call_id)]),
                  Reply(text="3"))
    agent = Agent(LLM(model_for(fake_llm)), calculator(), ApproveAll())
    await run(agent)
    assert agent.messages[1]["tool_calls"][0]["id"] == call_id
    assert agent.messages[2]["tool_call_id"] == call_id
    gemini = LLM(ModelSettings(name="gemini/gemini-3-pro-preview", api_key="k"))
    handed = gemini._request(agent.messages, [])["messages"]
    assert handed[1]["tool_calls"][0]["id"] == call_id and handed[2]["tool_call_id"] == call_id


async def test_anthropic_tool_turn_sends_the_thinking_back_joined_and_signed(
        anthropic_fake: AnthropicFake) -> None:
    """The second request of a tool turn must carry the thinking block (pieces joined, the
    signature on it) and the redacted block as it came, before the tool_use: Anthropic
    refuses it otherwise (the fake enforces that rule and verifies each signature)."""
    anthropic_fake.push(
        AReply(thinking="Let me add them.", chunk_chars=4, redacted=True,
               tool_uses=[ToolUse("local__add", {"a": 2, "b": 3}, id="toolu_1")]),
        AReply(thinking="Done.", text="It is 5."))
    agent = Agent(claude(anthropic_fake), calculator(), ApproveAll())
    events = await run(agent)
    assert not [e for e in events if isinstance(e, ErrorOccurred)], events
    assert len(anthropic_fake.usages) == len(anthropic_fake.requests) == 2  # none refused
    assert "".join(e.delta for e in events if isinstance(e, ReasoningDelta)) == \
        "Let me add them.Done."
    bodies = [r.body for r in anthropic_fake.requests]
    (sent,) = assistant_blocks(bodies[1])
    signature = anthropic_fake.sign("Let me add them.")
    assert sent[0] == {"type": "thinking", "thinking": "Let me add them.",
                       "signature": signature}
    assert sent[1]["type"] == "redacted_thinking" and sent[1]["data"].endswith("==")
    assert sent[-1]["type"] == "tool_use" and sent[-1]["id"] == "toolu_1"
    assert bodies[0]["thinking"]["type"] == "enabled"
    reply = agent.messages[1]
    assert reply["thinking_blocks"][0]["signature"] == signature


async def test_a_thinking_block_a_cut_stream_left_unsigned_is_not_sent() -> None:
    """A reply stopped mid-thinking keeps its text for the display, but a block without
    its signature never goes to the provider (it would refuse the request)."""
    from tui_agent.core.llm.request import Route, outgoing

    unsigned = {"role": "assistant", "content": "par", "reasoning_content": "hm",
                "thinking_blocks": [{"type": "thinking", "thinking": "hm"}]}
    signed = {**unsigned, "thinking_blocks": [{"type": "thinking", "thinking": "hm",
                                               "signature": "s"}]}
    where = Route("anthropic", "claude-sonnet-4-5", known=True, reasons=True)
    assert outgoing([unsigned], where) == [{"role": "assistant", "content": "par"}]
    assert outgoing([signed], where)[0]["thinking_blocks"] == signed["thinking_blocks"]
    reply = LLMReply(text="par", reasoning="hm", incomplete=True,
                     thinking_blocks=[{"type": "thinking", "thinking": "hm"}])
    assert "thinking_blocks" not in reply.message()
    assert reply.message()["reasoning_content"] == "hm"


@pytest.mark.parametrize(("name", "sent"), [("openai/gpt-4o-mini", False),
                                            ("openai/o3-mini", True),
                                            ("openai/my-local-model", True)])
async def test_reasoning_effort_goes_only_to_models_that_can_reason(
        fake_llm: FakeLLM, name: str, sent: bool) -> None:
    """Known not to reason: left out, with a note (once). Known to: sent. Unknown to
    litellm (a local or new model): sent, as the user asked."""
    llm = LLM(model_for(fake_llm, name=name, reasoning_effort="high"))
    fake_llm.push(Reply(text="a"), Reply(text="b"))
    first = [i async for i in llm.stream([{"role": "user", "content": "hi"}])]
    second = [i async for i in llm.stream([{"role": "user", "content": "hi"}])]
    assert ("reasoning_effort" in fake_llm.requests[0]) is sent
    if sent:
        assert fake_llm.requests[0]["reasoning_effort"] == "high"
    notes = [i.message for i in first if isinstance(i, Notice)]
    assert notes == ([] if sent else [
        f'{name} does not reason: reasoning_effort = "high" is not sent'])
    assert not [i for i in second if isinstance(i, Notice)]  # told once
    assert llm.notes() == notes


async def test_none_is_not_sent_to_a_model_that_cannot_stop_reasoning(
        fake_llm: FakeLLM) -> None:
    """litellm refuses ``reasoning_effort="none"`` for gpt-5-mini (it always reasons); a
    model that can stop gets it."""
    fake_llm.push(Reply(text="a"), Reply(text="b"))
    always = LLM(model_for(fake_llm, name="openai/gpt-5-mini", reasoning_effort="none"))
    items = [i async for i in always.stream([{"role": "user", "content": "hi"}])]
    assert isinstance(items[-1], LLMReply) and "reasoning_effort" not in fake_llm.requests[0]
    assert [i.message for i in items if isinstance(i, Notice)] == [
        'openai/gpt-5-mini cannot stop reasoning: reasoning_effort = "none" is not sent '
        "(it thinks as much as it does by default)"]
    stops = LLM(model_for(fake_llm, name="openai/gpt-5.1", reasoning_effort="none"))
    [i async for i in stops.stream([{"role": "user", "content": "hi"}])]
    assert fake_llm.requests[1]["reasoning_effort"] == "none"


async def test_thinking_on_claude_drops_a_temperature_other_than_1(
        anthropic_fake: AnthropicFake) -> None:
    """Anthropic refuses a temperature other than 1 with thinking on (the fake too)."""
    anthropic_fake.push(AReply(text="a", thinking="x"), AReply(text="b"))
    thinking = claude(anthropic_fake, temperature=0.3)
    items = [i async for i in thinking.stream([{"role": "user", "content": "hi"}])]
    plain = claude(anthropic_fake, temperature=0.3, reasoning_effort=None)
    [i async for i in plain.stream([{"role": "user", "content": "hi"}])]
    bodies = [r.body for r in anthropic_fake.requests]
    assert "temperature" not in bodies[0] and bodies[0]["thinking"]["type"] == "enabled"
    assert [i.message for i in items if isinstance(i, Notice)] == [
        'temperature 0.3 is not sent: Anthropic takes only 1 while '
        'anthropic/claude-sonnet-4-5 thinks (reasoning_effort = "medium")']
    assert bodies[1]["temperature"] == 0.3 and "thinking" not in bodies[1]


def big_tools(text: str) -> LocalTools:
    tools = calculator()

    def fetch(a: int, b: int) -> str:
        return text

    tools.add(fetch, description="Fetch a long page.", parameters=NUMBERS)
    return tools


def compacting(body: dict[str, Any]) -> bool:
    return "You are compacting" in json.dumps(body.get("system", ""))


async def test_compaction_inside_a_tool_loop_keeps_the_thinking_block_first(
        anthropic_fake: AnthropicFake, tmp_path: Path) -> None:
    """A compaction that cuts the history inside a tool loop keeps the reply that called
    the tool verbatim, thinking block first: the request after it is not refused (the
    fake verifies the block's signature)."""
    words = " ".join(f"w{i}" for i in range(450))
    anthropic_fake.push(
        AReply(text="summary"),
        AReply(thinking="I will fetch.",
               tool_uses=[ToolUse("local__fetch", {"a": 1, "b": 2}, id="toolu_9")]),
        AReply(text="summary"),
        AReply(text="Here it is."))
    path = tmp_path / "20260101-000000-abcdef.jsonl"
    session = SessionWriter.create(path, {})
    agent = Agent(claude(anthropic_fake, context_window=2000), big_tools(" ".join(
        f"r{i}" for i in range(800))), ApproveAll(), session=session,
        settings=AgentSettings(compact_at=0.8),
        history=[{"role": "user", "content": f"Remember: {words}"},
                 {"role": "assistant", "content": "Noted."}])
    events = await run(agent, f"Fetch it. Context: {words[:1500]}")
    session.close()
    bodies = [r.body for r in anthropic_fake.requests]
    assert [compacting(b) for b in bodies] == [True, False, True, False]
    compacted = [e for e in events if isinstance(e, Compacted)]
    # the last one cut inside the tool loop: it kept only the reply that called and the result
    assert compacted and compacted[-1].kept == 2
    assert len(anthropic_fake.usages) == len(bodies)  # none refused
    assert not [e for e in events if isinstance(e, ErrorOccurred)]
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"
    (kept,) = assistant_blocks(bodies[-1])
    signature = anthropic_fake.sign("I will fetch.")
    assert kept[0] == {"type": "thinking", "thinking": "I will fetch.", "signature": signature}
    saved = [m for m in load(path).messages if m.get("tool_calls")]
    assert saved[0]["thinking_blocks"][0]["signature"] == signature


async def test_a_reply_stopped_while_thinking_keeps_its_thinking_and_sends_none_of_it(
        anthropic_fake: AnthropicFake, tmp_path: Path) -> None:
    """Stopped before any text: the thinking so far is kept (history, session file, so
    resume shows it), but the half block has no signature and the next request carries
    nothing of the stopped reply (the fake verifies every block it gets back)."""
    anthropic_fake.push(AReply(thinking="Let me think about this at length.", chunk_chars=6,
                               text="Never shown."),
                        AReply(text="Hello."))
    path = tmp_path / "20260101-000000-abcdef.jsonl"
    session = SessionWriter.create(path, {})
    agent = Agent(claude(anthropic_fake), calculator(), ApproveAll(), session=session)
    turn = agent.run_turn("hi")
    seen = 0
    async for event in turn:
        if isinstance(event, ReasoningDelta):
            seen += 1
            if seen == 2:
                break
    await turn.aclose()
    kept = agent.messages[-1]
    assert kept["role"] == "assistant" and kept["reasoning_content"] == "Let me think"
    assert not kept.get("content") and "thinking_blocks" not in kept
    events = await run(agent, "again")
    session.close()
    assert not [e for e in events if isinstance(e, ErrorOccurred)], events
    sent = anthropic_fake.requests[-1].body
    assert [m["role"] for m in sent["messages"]] == ["user"]  # the two asks, merged
    assert "think" not in json.dumps(sent["messages"])
    loaded = load(path)
    assert [m.get("reasoning_content") for m in loaded.messages
            if m["role"] == "assistant"] == ["Let me think", None]
