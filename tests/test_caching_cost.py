"""Prompt caching, usage and true cost through litellm: cache breakpoints go only where the
provider caches on request (Claude), the cached and reasoning counts are read into the
usage, the cost is the list price computed by hand (within 1%), a local model's cost is
unknown, and each request names its conversation and carries ``[model] params``."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import model_for
from tests.fakes.anthropic_server import AnthropicFake
from tests.fakes.anthropic_server import Reply as AReply
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_agent import calculator
from tui_agent.config.models import ModelSettings
from tui_agent.core.agent import Agent
from tui_agent.core.events import TurnDone, Usage
from tui_agent.core.llm import LLM, load_litellm, loader
from tui_agent.core.llm import Reply as LLMReply
from tui_agent.core.llm.request import LOCAL_PROVIDERS, build, route
from tui_agent.core.permissions import DenyAll
from tui_agent.core.session import SessionWriter

pytestmark = pytest.mark.anyio
HI = [{"role": "user", "content": "hi"}]
TOOL = [{"type": "function", "function": {"name": "local__add", "description": "Add.",
                                          "parameters": {"type": "object", "properties": {}}}}]


async def reply_of(llm: LLM, messages: list[dict[str, Any]] | None = None,
                   tools: list[dict[str, Any]] | None = None) -> LLMReply:
    items = [i async for i in llm.stream(messages or HI, tools or [])]
    assert isinstance(items[-1], LLMReply)
    return items[-1]


def marked(body: dict[str, Any]) -> list[str]:
    """Where an Anthropic request body carries cache_control."""
    where = [f"system[{i}]" for i, b in enumerate(body.get("system") or [])
             if isinstance(b, dict) and "cache_control" in b]
    where += [f"tools[{i}]" for i, t in enumerate(body.get("tools") or [])
              if "cache_control" in t]
    for i, m in enumerate(body["messages"]):
        content = m["content"] if isinstance(m["content"], list) else []
        where += [f"messages[{i}]" for b in content if "cache_control" in b]
    return where


@pytest.mark.parametrize("cache", [True, False])
async def test_claude_requests_mark_system_tools_and_the_latest_message(cache: bool) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    with AnthropicFake([AReply(text="ok")]) as fake:
        llm = LLM(ModelSettings(name="anthropic/claude-sonnet-4-5", api_base=fake.base_url,
                                api_key="k", max_retries=0, prompt_cache=cache))
        await reply_of(llm, messages, TOOL)
    assert marked(fake.requests[0].body) == (["system[0]", "tools[0]", "messages[2]"]
                                             if cache else [])


@pytest.mark.parametrize(("name", "caches"), [
    ("anthropic/claude-sonnet-4-5", True),
    ("bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0", True),
    ("vertex_ai/claude-sonnet-4@20250514", True),
    ("openai/gpt-4o-mini", False), ("gemini/gemini-2.5-pro", False),
    ("deepseek/deepseek-chat", False), ("bedrock/amazon.nova-pro-v1:0", False),
    ("litellm_proxy/claude-team", True), ("litellm_proxy/team-model", False)])
async def test_breakpoints_only_where_the_provider_caches_on_request(
        name: str, caches: bool) -> None:
    settings = ModelSettings(name=name)
    kwargs = build(settings, route(load_litellm(), settings), HI, TOOL)
    assert ("cache_control_injection_points" in kwargs) is caches


async def test_cost_is_the_list_price_by_hand_with_cache_and_reasoning(
        fake_llm: FakeLLM) -> None:
    """DeepSeek speaks OpenAI's format: its cached tokens cost a tenth of fresh input."""
    fake_llm.push(Reply(text="ok", reasoning="hm", usage={
        "prompt_tokens": 12000, "completion_tokens": 900, "total_tokens": 12900,
        "prompt_tokens_details": {"cached_tokens": 10000},
        "completion_tokens_details": {"reasoning_tokens": 700}}))
    reply = await reply_of(LLM(model_for(fake_llm, name="deepseek/deepseek-reasoner")))
    info = load_litellm().get_model_info("deepseek/deepseek-reasoner")
    by_hand = (2000 * info["input_cost_per_token"] + 10000 * info["cache_read_input_token_cost"]
               + 900 * info["output_cost_per_token"])
    u = reply.usage
    assert (u.prompt_tokens, u.completion_tokens, u.cache_read_tokens, u.reasoning_tokens) == \
        (12000, 900, 10000, 700)
    assert u.cost == pytest.approx(by_hand, rel=0.01)
    assert u.cost < (12000 * info["input_cost_per_token"]  # not every token as fresh input
                     + 900 * info["output_cost_per_token"]) * 0.6


async def test_claude_cost_prices_cache_reads_and_writes_by_hand() -> None:
    """The second request reads the first one's prefix from the cache and writes its own
    longer one: each part at its list price."""
    system = {"role": "system", "content": " ".join(f"rule {i}." for i in range(800))}
    first = [system, {"role": "user", "content": "a"}]
    second = [*first, {"role": "assistant", "content": "b"},
              {"role": "user", "content": " ".join(f"fact {i}." for i in range(400))}]
    with AnthropicFake([AReply(text="b"), AReply(text="ok", output_tokens=200)]) as fake:
        llm = LLM(ModelSettings(name="anthropic/claude-sonnet-4-5", api_base=fake.base_url,
                                api_key="k", max_retries=0))
        await reply_of(llm, first)
        reply = await reply_of(llm, second)
    said = fake.usages[-1]
    fresh, written, read = (said["input_tokens"], said["cache_creation_input_tokens"],
                            said["cache_read_input_tokens"])
    assert written and read  # nothing fresh: the latest message carries a breakpoint
    info = load_litellm().get_model_info("anthropic/claude-sonnet-4-5")
    by_hand = (fresh * info["input_cost_per_token"]
               + written * info["cache_creation_input_token_cost"]
               + read * info["cache_read_input_token_cost"]
               + 200 * info["output_cost_per_token"])
    u = reply.usage
    assert (u.cache_read_tokens, u.cache_write_tokens, u.completion_tokens) == \
        (read, written, 200)
    assert u.prompt_tokens == fresh + written + read  # litellm's: input + writes + reads
    assert u.cost == pytest.approx(by_hand, rel=0.01)


@pytest.mark.parametrize("name", ["openai/priced-local-model", "hosted_vllm/priced-local-model"])
async def test_a_local_model_costs_unknown_never_zero(fake_llm: FakeLLM, name: str) -> None:
    """Even one litellm has a price for: served from this machine, nothing is billed."""
    load_litellm().register_model({name: {
        "max_input_tokens": 8000, "max_output_tokens": 1000, "input_cost_per_token": 1e-6,
        "output_cost_per_token": 2e-6, "litellm_provider": name.split("/")[0],
        "mode": "chat"}})
    fake_llm.push(Reply(text="abc", usage={"prompt_tokens": 1000, "completion_tokens": 500,
                                           "total_tokens": 1500}))
    llm = LLM(model_for(fake_llm, name=name))
    reply = await reply_of(llm)
    assert reply.usage.prompt_tokens == 1000 and reply.usage.cost is None
    assert llm.unbilled().cost is None


async def test_the_turn_and_the_session_file_carry_cache_and_reasoning_counts(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="ok", usage={
        "prompt_tokens": 3000, "completion_tokens": 50, "total_tokens": 3050,
        "prompt_tokens_details": {"cached_tokens": 2048},
        "completion_tokens_details": {"reasoning_tokens": 30}}))
    path = tmp_path / "20260101-000000-abcdef.jsonl"
    session = SessionWriter.create(path, {})
    agent = Agent(LLM(model_for(fake_llm)), calculator(), DenyAll(), session=session)
    events = [e async for e in agent.run_turn("hi")]
    session.close()
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert (done.usage.cache_read_tokens, done.usage.reasoning_tokens) == (2048, 30)
    assert done.to_json()["usage"]["cache_read_tokens"] == 2048
    turn = [json.loads(line) for line in path.read_text().splitlines()][-1]
    assert turn["kind"] == "turn" and turn["usage"]["cache_read_tokens"] == 2048
    assert Usage(**turn["usage"]).reasoning_tokens == 30


async def test_params_go_last_and_may_override(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="ok"))
    await reply_of(LLM(model_for(fake_llm, temperature=0.9, params={
        "temperature": 0.2, "top_p": 0.5, "extra_body": {"seed": 7}})))
    sent = fake_llm.requests[0]
    assert (sent["temperature"], sent["top_p"], sent["seed"]) == (0.2, 0.5, 7)


async def test_ollama_gets_num_ctx_equal_to_the_window_counted_with() -> None:
    llm = LLM(ModelSettings(name="ollama_chat/qwen3", context_window=32768))
    assert llm._request(HI, [])["num_ctx"] == llm.window() == 32768
    other = LLM(ModelSettings(name="openai/gpt-4o-mini", context_window=32768))
    assert "num_ctx" not in other._request(HI, [])


async def test_each_request_names_its_conversation(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Through a LiteLLM Proxy (litellm_proxy/) the id is in the body, where the proxy's
    spend logs read it; litellm's own logging reads ``litellm_session_id``."""
    fake_llm.push(Reply(text="one"), Reply(text="two"))
    session = SessionWriter.create(tmp_path / "20260101-000000-abcdef.jsonl", {})
    llm = LLM(model_for(fake_llm, name="litellm_proxy/team-model"))
    agent = Agent(llm, calculator(), DenyAll(), session=session)
    [e async for e in agent.run_turn("hi")]
    [e async for e in agent.run_turn("again")]
    session.close()
    for body in fake_llm.requests:
        assert body["litellm_session_id"] == session.id
        assert body["metadata"] == {"session_id": session.id}
    assert llm._request(HI, [])["litellm_session_id"] == session.id
    alone = Agent(LLM(model_for(fake_llm)), calculator(), DenyAll())
    fake_llm.push(Reply(text="three"))
    [e async for e in alone.run_turn("hi")]
    assert alone.llm.session_id == alone.conversation_id  # type: ignore[attr-defined]


async def test_unbilled_never_waits_for_litellm_and_knows_the_price_once_prepared(
        fake_llm: FakeLLM) -> None:
    """A turn stopped on its first request, while litellm is still importing, ends at once:
    its cost is unknown (the route is learnt only where the request is prepared, in a
    thread). Once a request was prepared, a priced model's unbilled turn costs 0.0."""
    llm = LLM(model_for(fake_llm, name="deepseek/deepseek-chat"))
    answers: list[Usage] = []
    load_litellm()  # in sys.modules, as it is from the moment its import starts
    with loader._lock:  # as while litellm imports in the preload thread
        asking = threading.Thread(target=lambda: answers.append(llm.unbilled()), daemon=True)
        asking.start()
        asking.join(5)
        assert answers == [Usage(cost=None)]
    fake_llm.push(Reply(text="ok"))
    await reply_of(llm)
    assert llm.unbilled() == Usage(cost=0.0)


def test_the_local_providers_are_named_as_litellm_names_them() -> None:
    names = {str(getattr(p, "value", p)) for p in load_litellm().provider_list}
    assert names >= LOCAL_PROVIDERS, LOCAL_PROVIDERS - names
