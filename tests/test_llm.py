"""The litellm client against the scripted OpenAI-compatible server: streaming,
tool-call reassembly, usage and cost, retries, and every failure named clearly."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from tests.conftest import model_for
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tui_agent.config.models import ModelSettings
from tui_agent.core.events import Retrying, TextDelta
from tui_agent.core.llm import LLM, StreamCut, load_litellm
from tui_agent.core.llm import Reply as LLMReply
from tui_agent.core.llm.errors import LLMError

pytestmark = pytest.mark.anyio
MESSAGES = [{"role": "user", "content": "hi"}]


async def collect(llm: LLM, tools: list[dict[str, Any]] | None = None) -> list[Any]:
    return [item async for item in llm.stream(MESSAGES, tools or [])]


async def test_text_streams_in_deltas(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Hello, streaming world!", chunk_chars=3))
    items = await collect(LLM(model_for(fake_llm)))
    deltas = [i.delta for i in items if isinstance(i, TextDelta)]
    assert len(deltas) == 8 and "".join(deltas) == "Hello, streaming world!"
    reply = items[-1]
    assert isinstance(reply, LLMReply)
    assert reply.text == "Hello, streaming world!" and not reply.incomplete
    assert reply.finish_reason == "stop"
    assert fake_llm.requests[0]["stream"] is True
    assert fake_llm.requests[0]["messages"] == MESSAGES


async def test_tool_call_deltas_are_reassembled(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Let me look.", tool_calls=[
        FakeToolCall("local__weather", {"city": "Paris", "days": 3}, id="call_a", split=5),
        FakeToolCall("local__time", '{"tz": "Europe/Paris"}', id="call_b", split=4),
    ]))
    reply = (await collect(LLM(model_for(fake_llm))))[-1]
    assert [(c.id, c.name) for c in reply.tool_calls] == [("call_a", "local__weather"),
                                                         ("call_b", "local__time")]
    assert reply.tool_calls[0].arguments == '{"city": "Paris", "days": 3}'
    assert reply.tool_calls[1].arguments == '{"tz": "Europe/Paris"}'
    assert reply.finish_reason == "tool_calls"
    assert reply.message()["tool_calls"][1]["function"]["name"] == "local__time"


async def test_usage_is_reported_and_unknown_cost_is_none(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="abc", usage={"prompt_tokens": 42, "completion_tokens": 7,
                                           "total_tokens": 49}))
    reply = (await collect(LLM(model_for(fake_llm))))[-1]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (42, 7)
    assert reply.usage.total_tokens == 49
    assert reply.usage.cost is None  # the fake model has no price: unknown, not zero


async def test_cost_is_computed_for_a_priced_model(fake_llm: FakeLLM) -> None:
    """A hosted provider that speaks OpenAI's format (an ``openai/`` model on this machine
    is local: its cost is unknown, see tests/test_caching_cost.py)."""
    litellm = load_litellm()
    litellm.register_model({"deepseek/priced-test-model": {
        "max_input_tokens": 8000, "max_output_tokens": 1000, "input_cost_per_token": 1e-6,
        "output_cost_per_token": 2e-6, "litellm_provider": "deepseek", "mode": "chat"}})
    fake_llm.push(Reply(text="abc", usage={"prompt_tokens": 1000, "completion_tokens": 500,
                                           "total_tokens": 1500}))
    reply = (await collect(LLM(model_for(fake_llm, name="deepseek/priced-test-model"))))[-1]
    assert reply.usage.cost == pytest.approx(1000 * 1e-6 + 500 * 2e-6)


async def test_429_is_retried_then_succeeds(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=429, headers={"Retry-After": "0"}), Reply(text="ok now"))
    items = await collect(LLM(model_for(fake_llm)))
    retries = [i for i in items if isinstance(i, Retrying)]
    assert len(retries) == 1
    assert retries[0].delay == 0 and "429" in retries[0].reason  # Retry-After honoured
    assert items[-1].text == "ok now"
    assert len(fake_llm.requests) == 2


async def test_500_three_times_fails_after_the_retries(fake_llm: FakeLLM) -> None:
    fake_llm.push(*[Reply(status=500, error_message="upstream exploded")] * 3)
    llm = LLM(model_for(fake_llm, max_retries=2))
    seen: list[Any] = []
    with pytest.raises(LLMError) as info:
        async for item in llm.stream(MESSAGES):
            seen.append(item)
    assert info.value.kind == "server"
    assert "500" in str(info.value) and "upstream exploded" in str(info.value)
    assert [r.attempt for r in seen if isinstance(r, Retrying)] == [1, 2]
    assert len(fake_llm.requests) == 3


async def test_unreachable_api_base_is_named() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = ModelSettings(name="openai/x", api_base=f"http://127.0.0.1:{port}/v1",
                             api_key="k", max_retries=1, retry_backoff=0.01)
    with pytest.raises(LLMError) as info:
        await collect(LLM(settings))
    assert info.value.kind == "unreachable"
    assert f"127.0.0.1:{port}" in str(info.value)


async def test_missing_api_key_is_caught_before_any_request() -> None:
    llm = LLM(ModelSettings(name="openai/gpt-4o-mini"))
    with pytest.raises(LLMError) as info:
        await collect(llm)
    assert info.value.kind == "no_api_key" and info.value.is_config
    assert "OPENAI_API_KEY" in str(info.value)

    with pytest.raises(LLMError) as anthropic:
        await asyncio.to_thread(LLM(ModelSettings(name="anthropic/claude-sonnet-4-5")).check)
    assert "ANTHROPIC_API_KEY" in str(anthropic.value)


async def test_local_models_need_no_key() -> None:
    await asyncio.to_thread(LLM(ModelSettings(name="ollama/llama3.1")).check)


async def test_unknown_model_is_named() -> None:
    with pytest.raises(LLMError) as info:
        await asyncio.to_thread(LLM(ModelSettings(name="no-such-model-xyz")).check)
    assert info.value.kind == "unknown_model"
    assert "no-such-model-xyz" in str(info.value) and "openai/no-such-model-xyz" in str(info.value)


async def test_model_the_server_does_not_know(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=404, error_message="The model `nope` does not exist"))
    with pytest.raises(LLMError) as info:
        await collect(LLM(model_for(fake_llm)))
    assert info.value.kind == "unknown_model" and "does not exist" in str(info.value)
    assert len(fake_llm.requests) == 1  # not retried


async def test_no_model_configured() -> None:
    with pytest.raises(LLMError) as info:
        await collect(LLM(ModelSettings()))
    assert info.value.kind == "no_model" and "--model" in str(info.value)


@pytest.mark.parametrize("clean_eof", [False, True], ids=["connection-reset", "clean-eof"])
async def test_stream_cut_mid_reply_keeps_what_arrived(fake_llm: FakeLLM,
                                                       clean_eof: bool) -> None:
    fake_llm.push(Reply(text="The first half and the second half", chunk_chars=4,
                        cut_after=5, cut_clean=clean_eof))
    deltas: list[str] = []
    with pytest.raises(StreamCut) as info:
        async for item in LLM(model_for(fake_llm)).stream(MESSAGES):
            if isinstance(item, TextDelta):
                deltas.append(item.delta)
    partial = info.value.partial
    assert partial.incomplete
    assert partial.text == "".join(deltas) == "The first half a"
    assert "cut" in str(info.value)
    assert len(fake_llm.requests) == 1  # text already shown is never re-requested


async def test_cut_tool_call_is_dropped_not_run(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="x", tool_calls=[FakeToolCall("t", {"a": 1}, split=3)],
                        cut_after=4, cut_clean=True))
    with pytest.raises(StreamCut) as info:
        await collect(LLM(model_for(fake_llm)))
    assert info.value.partial.tool_calls == []


@pytest.mark.parametrize("clean_eof", [False, True], ids=["connection-reset", "clean-eof"])
async def test_cut_before_any_content_is_retried(fake_llm: FakeLLM, clean_eof: bool) -> None:
    fake_llm.push(Reply(text="lost", cut_after=1, cut_clean=clean_eof), Reply(text="second try"))
    items = await collect(LLM(model_for(fake_llm)))
    assert any(isinstance(i, Retrying) for i in items)
    assert items[-1].text == "second try"


async def test_cancel_mid_stream_stops_promptly(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="word " * 200, chunk_chars=5, delay=0.05))
    got_first = asyncio.Event()

    async def consume() -> None:
        async for item in LLM(model_for(fake_llm)).stream(MESSAGES):
            if isinstance(item, TextDelta):
                got_first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_first.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)


async def test_with_api_base_the_providers_key_from_the_environment_is_sent(
        fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--api-base`` to a hosted OpenAI-compatible endpoint: OPENAI_API_KEY goes with the
    request; with no key anywhere, a local server gets the placeholder it ignores."""
    llm = LLM(model_for(fake_llm, api_key=None))
    fake_llm.push(Reply(text="one"), Reply(text="two"))
    await collect(llm)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-env")
    await collect(llm)
    assert fake_llm.authorizations == ["Bearer no-key", "Bearer sk-from-the-env"]


async def test_a_refused_key_says_how_to_give_one(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=401, error_message="Incorrect API key provided"))
    with pytest.raises(LLMError) as caught:
        await collect(LLM(model_for(fake_llm, max_retries=0)))
    assert caught.value.kind == "auth"
    assert 'Give it the key with [model] api_key_env = "VAR"' in str(caught.value)
