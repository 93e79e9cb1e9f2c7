"""Long conversations against a scripted provider that has a real context window (it
counts each request with its own tokenizer and refuses one that is too long, as OpenAI
does): accounting before each request, automatic compaction, recovery from a refusal,
manual compaction, and nothing lost on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_server, model_for
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply, is_compaction
from tests.fakes.tokens import prose
from tests.test_agent import RecordingGate
from tui_agent.config.models import AgentSettings, ModelSettings
from tui_agent.core.agent import Agent
from tui_agent.core.compaction import choose_cut, window_in
from tui_agent.core.events import (
    Compacted,
    ContextSize,
    ErrorOccurred,
    Event,
    ToolResult,
    TurnDone,
)
from tui_agent.core.export import to_markdown
from tui_agent.core.llm import LLM
from tui_agent.core.session import SessionStore, SessionWriter, load
from tui_agent.tools.hub import Hub

pytestmark = pytest.mark.anyio

SUMMARY = "SUMMARY: the user sent numbered notes; nothing is open."


words = prose
is_summary_request = is_compaction


class Summarizing(FakeLLM):
    """Answers a compaction request with :data:`SUMMARY`, any other with ``reply`` (unless
    the script has a reply)."""

    def __init__(self, window: int | None, reply: str = "ok") -> None:
        super().__init__(window=window, repeat=Reply(text=reply, chunk_chars=200))
        self.summary = SUMMARY


def agent_for(server: FakeLLM, tmp_path: Path, *, window: int | None, tools: Any = None,
              **settings: Any) -> Agent:
    store = SessionStore(tmp_path / "sessions")
    writer = SessionWriter.create(store.new_path(), {})
    from tui_agent.tools.local import NoTools

    return Agent(LLM(model_for(server, context_window=window)), tools or NoTools(),
                 RecordingGate(), session=writer, settings=AgentSettings(**settings))


async def turn(agent: Agent, text: str) -> list[Event]:
    return [e async for e in agent.run_turn(text)]


def test_the_window_is_the_configured_one_else_litellms_else_unknown() -> None:
    assert LLM(ModelSettings(name="openai/my-local", context_window=5000)).window() == 5000
    assert LLM(ModelSettings(name="openai/gpt-4o")).window() == 128_000
    assert LLM(ModelSettings(name="openai/my-local")).window() is None
    assert LLM(ModelSettings(name="anthropic/claude-sonnet-4-5", context_window=50_000)
               ).window() == 50_000


def test_a_tool_call_and_its_result_are_never_split() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "a"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
                {"role": "tool", "tool_call_id": "1", "content": "r" * 100},
                {"role": "user", "content": [{"type": "text", "text": "images"}]},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": "b"}]
    sizes = [5, 5, 100, 50, 5, 5]
    for keep in range(0, 200, 5):
        cut = choose_cut(messages, sizes, 0, keep, between_turns=False)
        assert cut in (1, 4, 5), keep  # never at a result, nor at the images after results
    assert choose_cut(messages, sizes, 0, 10, between_turns=False) == 5  # the last user turn
    assert choose_cut(messages, sizes, 0, 0, between_turns=True) == 6  # all of it, by hand
    assert choose_cut(messages, sizes, 5, 100, between_turns=False) is None  # nothing before


def test_a_refusal_names_the_window_it_had() -> None:
    assert window_in("This model's maximum context length is 8,192 tokens. However") == 8192
    assert window_in("prompt is too long: 210000 tokens > 200000 maximum") == 200_000
    assert window_in("the request failed") is None


async def test_a_long_conversation_stays_under_the_window(tmp_path: Path) -> None:
    with Summarizing(window=3000, reply=words(600, 0)) as server:
        agent = agent_for(server, tmp_path, window=3000)
        seen: list[Event] = []
        for n in range(12):
            events = await turn(agent, words(1200, n + 1))
            assert isinstance(events[-1], TurnDone) and events[-1].reason == "end", events[-1]
            seen += events
        compactions = [e for e in seen if isinstance(e, Compacted)]
        summaries = [b for b in server.requests if is_summary_request(b)]
        assert compactions and len(summaries) == len(compactions)  # one request each
        assert server.refused == 0 and max(server.sizes) <= 3000
        assert len(server.requests) == 12 + len(compactions)
        assert all(c.reason == "auto" and c.tokens_after < c.tokens_before for c in compactions)
        sizes = [e for e in seen if isinstance(e, ContextSize)]
        assert all(s.window == 3000 and s.compact_at == 2400 for s in sizes)
        # our count, corrected by the provider's reports, is close to the provider's own
        ratio = sizes[-1].tokens / server.sizes[-1]
        assert 0.9 < ratio < 1.1, ratio
        last = server.requests[-1]["messages"]
        assert last[0]["content"].startswith("[tui-agent compacted the earlier conversation")
        assert SUMMARY in last[0]["content"]
        # a turn that compacted bills its summary request too
        billed = next(e for e in seen if isinstance(e, TurnDone) and e.usage.prompt_tokens
                      > server.sizes[0] * 2)
        assert billed.context is not None
    assert agent.session is not None
    agent.session.close()
    conv = load(agent.session.path)
    assert len(conv.entries) == 24  # every message is kept
    assert conv.compaction is not None and conv.compaction.summary == SUMMARY
    assert len(conv.compactions) == len(compactions)
    resumed = Agent(agent.llm, agent.tools, RecordingGate(), history=conv.messages,
                    compaction=conv.compaction)
    assert resumed.context.view(resumed.messages, None) == agent.context.view(
        agent.messages, None)
    exported = to_markdown(conv)
    assert exported.count("compacted here") == len(compactions)
    assert words(1200, 1) in exported


async def test_a_refusal_compacts_and_the_request_goes_again(tmp_path: Path) -> None:
    with Summarizing(window=2500, reply="fine") as server:
        agent = agent_for(server, tmp_path, window=None)  # a model nobody knows the window of
        for n in range(4):  # 563, 1127, 1691, 2255 tokens: each fits
            done = (await turn(agent, words(2000, n)))[-1]
            assert isinstance(done, TurnDone) and done.reason == "end"
        events = await turn(agent, words(2000, 9))  # 2819: refused
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "end"
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert [c.reason for c in compacted] == ["overflow"]
    assert server.refused == 1 and server.sizes[-1] <= 2500
    assert agent.context.learned == 2500  # the window the refusal named
    assert done.context is not None and done.context.window == 2500


async def test_a_result_too_big_even_after_compacting_is_read_as_a_stub(tmp_path: Path) -> None:
    hub = Hub({"b": fake_server()}, log_dir=tmp_path)
    hub.start()
    with Summarizing(window=4000, reply="done") as server:
        server.push(Reply(tool_calls=[FakeToolCall("b__big", {"size": 30_000}, id="big1")]))
        try:
            agent = agent_for(server, tmp_path, window=None, tools=hub,
                              max_tool_output=10_000)
            events = await turn(agent, "big please")
        finally:
            await hub.close()
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "end", events
    assert any(isinstance(e, ToolResult) for e in events)
    stubbed = [e for e in events if isinstance(e, Compacted) and e.stubbed]
    assert len(stubbed) == 1
    sent = server.requests[-1]["messages"]
    stub = next(m for m in sent if m["role"] == "tool")["content"]
    assert stub.startswith("[This tool result (") and "big1.txt" in stub
    kept = Path(stub.split("kept in ")[1].split(". Call")[0])
    assert len(kept.read_text()) == 30_000  # the whole result, beside the session
    assert server.sizes[-1] <= 4000


async def test_what_no_compaction_can_fit_ends_with_a_clear_error(tmp_path: Path) -> None:
    with Summarizing(window=1500) as server:
        agent = agent_for(server, tmp_path, window=None)
        events = await turn(agent, words(9000, 1))  # the message alone is too big
    errors = [e for e in events if isinstance(e, ErrorOccurred)]
    assert len(errors) == 1 and errors[0].kind == "context_window"
    message = errors[0].message
    assert "still too long" in message and "The biggest part is the messages" in message
    assert "maximum context length is 1500" in message
    assert server.refused == 3  # the request, and one retry after each remedy
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "error"


async def test_compact_by_hand_with_instructions(tmp_path: Path) -> None:
    with Summarizing(window=None) as server:
        agent = agent_for(server, tmp_path, window=None)
        for n in range(3):
            await turn(agent, words(300, n))
        events = [e async for e in agent.compactor.manual("keep the note numbers")]
        assert isinstance(events[0], Compacted) and events[0].reason == "manual"
        assert isinstance(events[-1], ContextSize) and events[-1].summary > 0
        asked = server.requests[-1]
        assert is_summary_request(asked)
        assert "keep the note numbers" in asked["messages"][0]["content"]
        assert words(300, 0) in asked["messages"][1]["content"]
        assert agent.usage.prompt_tokens > 0
        await turn(agent, "and now?")
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "user", "assistant", "user"]
    assert SUMMARY in sent[0]["content"] and sent[1]["content"] == words(300, 2)
    assert agent.session is not None
    agent.session.close()
    lines = [json.loads(x) for x in agent.session.path.read_text().splitlines()]
    record = next(r for r in lines if r["kind"] == "compaction")
    assert record["reason"] == "manual" and record["instructions"] == "keep the note numbers"
    assert record["replaces"] == 4 and record["in_turn"] is False
    assert load(agent.session.path).usage.prompt_tokens >= record["usage"]["prompt_tokens"]


def test_run_compact_on_a_resumed_session(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    with Summarizing(window=None, reply="noted") as server:
        base = ["run", "--model", "openai/fake-model", "--api-base", server.base_url]
        for n in range(2):
            assert main([*base, *(["--resume"] if n else []), words(200, n)]) == 0
        capsys.readouterr()
        assert main([*base, "--compact", "hi"]) == 2
        assert "--compact needs a conversation to compact: add --resume" in \
            capsys.readouterr().err
        assert main([*base, "--resume", "--compact", "--output", "jsonl"]) == 0
        events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [e["type"] for e in events] == ["session", "compaction", "context"]
        assert events[0]["resumed"] is True
        compacted = events[1]
        assert compacted["reason"] == "manual" and compacted["replaced"] == 2
        assert compacted["summary"] == SUMMARY and compacted["kept"] == 2
        assert events[2]["tokens"] == compacted["tokens_after"]
        assert main([*base, "--resume", "what now?"]) == 0  # goes on from the summary
        assert "compacted the conversation" not in capsys.readouterr().err
    sent = [m for m in server.requests[-1]["messages"] if m["role"] != "system"]
    assert SUMMARY in sent[0]["content"] and sent[1]["content"] == words(200, 1)
    assert sent[-1]["content"] == "what now?" and len(sent) == 4


async def test_the_offline_demo_compacts_too(tmp_path: Path) -> None:
    """The demo's scripted model answers a compaction with its own summary."""
    from tui_agent.demo.model import SUMMARY as DEMO_SUMMARY
    from tui_agent.demo.model import ScriptedTour
    from tui_agent.tools.local import NoTools

    agent = Agent(ScriptedTour(pace=0), NoTools(), RecordingGate())
    await turn(agent, "hello")
    await turn(agent, "and again")
    events = [e async for e in agent.compactor.manual()]
    assert isinstance(events[0], Compacted) and events[0].summary == DEMO_SUMMARY
    assert isinstance(events[-1], ContextSize) and events[-1].window is None
