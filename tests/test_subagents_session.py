"""Sub-agents kept: each one's transcript is a session file of its own beside the
parent's (``<stem>.agents/<call id>.jsonl``), the parent's record of the ``agent`` call
holds its card (name, model, status, usage, time, turns, tools, file), a resumed
conversation reads both back; and a sub-agent on a caching provider marks its own
requests for the prompt cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import AnthropicFake
from tests.fakes.anthropic_server import Reply as AReply
from tests.fakes.llm_server import FakeLLM
from tests.subagent_kit import (
    CHILD,
    CHILD_USAGE,
    agent_file,
    call_agent,
    config,
    parent_agent,
    reply,
    turn,
    two_models,
)
from tests.test_agent import RecordingGate
from tests.test_caching_cost import marked
from tui_agent.core.events import AgentFinished
from tui_agent.core.session import SavedAgent, agent_transcript, load
from tui_agent.wiring import build

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def models() -> Iterator[tuple[FakeLLM, FakeLLM]]:
    with two_models() as both:
        yield both


async def test_the_transcript_and_the_card_are_saved_and_read_back(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("call/1", "Summarize the plan", "writer")]),
                reply("Summary received."))
    child.push(reply("The plan, summarized.", usage=CHILD_USAGE))
    agent_file("writer", f"---\ndescription: Writes\nmodel: {CHILD}\n---\nWrite well.\n")
    settings = config(tmp_path, parent, child)
    writer = build.new_session(settings, "openai/parent-model", tmp_path / "s" / "conv.jsonl")
    agent = parent_agent(settings, RecordingGate(), session=writer, cwd=tmp_path)
    events = await turn(agent, "go")
    writer.close()
    ended = next(e for e in events if isinstance(e, AgentFinished))
    conversation = load(tmp_path / "s" / "conv.jsonl")
    saved = conversation.calls["call/1"].agent
    assert isinstance(saved, SavedAgent)
    assert (saved.name, saved.model, saved.status, saved.turns, saved.tools, saved.file) == (
        "writer", CHILD, "done", 1, (), "conv.agents/call_1.jsonl")
    assert saved.usage == ended.usage and saved.duration == ended.duration
    transcript = agent_transcript(conversation.path, saved)
    assert transcript is not None
    assert [(m["role"], m["content"]) for m in transcript.messages] == [
        ("user", "Summarize the plan"), ("assistant", "The plan, summarized.")]
    assert transcript.meta.get("agent") == "writer" and transcript.meta.get("model") == CHILD
    assert (tmp_path / "s" / "conv.agents").stat().st_mode & 0o077 == 0
    # Resumed: the parent goes on from its file, the card and the transcript still there.
    resumed = build.agent(settings, agent.llm, RecordingGate(), agent.policy,
                          history=conversation)
    assert any(m.get("tool_call_id") == "call/1" and m["content"].startswith(
        "The plan, summarized.") for m in resumed.messages)
    assert agent_transcript(conversation.path, SavedAgent("x", "m", "done",
                                                          file="../../etc/passwd")) is None
    assert agent_transcript(conversation.path, SavedAgent("x", "m", "done",
                                                          file="conv.agents/gone.jsonl")) is None


async def test_a_sub_agent_on_a_caching_provider_marks_its_own_requests(
        tmp_path: Path) -> None:
    with FakeLLM(model="parent-model") as parent, AnthropicFake([AReply(text="cached")]) as fake:
        parent.push(reply(calls=[call_agent("k1", "Think", "claude")]), reply("ok"))
        agent_file("claude", "---\ndescription: On Claude\nmodel: anthropic/claude-sonnet-4-5"
                             "\n---\nBe brief.\n")
        extra = (f'[models."anthropic/claude-sonnet-4-5"]\napi_base = "{fake.base_url}"\n'
                 'api_key = "sk-ant"\nmax_retries = 0\n')
        agent = parent_agent(config(tmp_path, parent, parent, extra), RecordingGate(),
                             cwd=tmp_path)
        events = await turn(agent, "go")
    assert next(e for e in events if isinstance(e, AgentFinished)).status == "done"
    (request,) = fake.requests
    # Its system prompt and its last message are marked (it has no tools to mark).
    assert marked(request.body) == ["system[0]", "messages[0]"]
