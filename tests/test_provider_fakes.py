"""The Anthropic Messages fake speaks its wire format and enforces Anthropic's rules.

Each test drives litellm itself (``acompletion`` with ``stream=True`` and the fake as
``api_base``), no other tui-agent code, so what passes here is what litellm really sends
and reads: a history rebuilt the way FACTS.md says is right passes, and the mistakes the
real API refuses (a dropped, altered or unjoined thinking block) come back as Anthropic's
400 through litellm. The Gemini and Ollama fakes have modules of their own beside this one
(``test_provider_fakes_gemini.py``, ``test_provider_fakes_ollama.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes import anthropic_server as anth
from tests.providers import (
    ASK,
    TOOLS,
    anthropic_fake,
    complete,
    raw_post,
    route,
    tool_result,
)

pytestmark = pytest.mark.anyio
_ = anthropic_fake  # a fixture, used by name below


async def test_anthropic_streams_text_with_its_usage(anthropic_fake: anth.AnthropicFake) -> None:
    anthropic_fake.push(anth.Reply(text="Hello from Claude.", output_tokens=7))
    done = await complete(ASK, **route(anthropic_fake))
    assert done.message.content == "Hello from Claude."
    sent = anthropic_fake.requests[0]
    assert sent.path == "/v1/messages" and sent.headers["x-api-key"] == "sk-fake"
    assert sent.headers["anthropic-version"]
    assert done.usage.completion_tokens == 7
    assert done.usage.prompt_tokens == anthropic_fake.usages[0]["input_tokens"] > 0


async def test_anthropic_thinking_tool_round_trip_passes_with_the_signed_block(
        anthropic_fake: anth.AnthropicFake) -> None:
    anthropic_fake.push(anth.Reply(thinking="The user wants UTC. I will call get_time.",
                                   tool_uses=[anth.ToolUse("get_time", {"tz": "UTC"})]),
                        anth.Reply(text="It is noon in UTC."))
    first = await complete(ASK, tools=TOOLS, reasoning_effort="medium",
                           **route(anthropic_fake))
    assert first.message.reasoning_content == "The user wants UTC. I will call get_time."
    history = [*ASK, first.assistant(), tool_result(first)]
    second = await complete(history, tools=TOOLS, reasoning_effort="medium",
                            **route(anthropic_fake))
    assert second.message.content == "It is noon in UTC."
    sent = anthropic_fake.requests[1].body
    assert sent["thinking"]["type"] == "enabled"
    assert sent["messages"][1]["content"][0]["type"] == "thinking"
    assert [m["content"][0]["type"] for m in sent["messages"]][-1] == "tool_result"


async def test_anthropic_refuses_a_tool_loop_whose_thinking_block_was_dropped(
        anthropic_fake: anth.AnthropicFake) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    anthropic_fake.push(anth.Reply(thinking="Call the tool.",
                                   tool_uses=[anth.ToolUse("get_time", {"tz": "UTC"})]))
    first = await complete(ASK, tools=TOOLS, reasoning_effort="medium",
                           **route(anthropic_fake))
    history = [*ASK, first.assistant(thinking_blocks=False), tool_result(first)]
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete(history, tools=TOOLS, reasoning_effort="medium",
                       **route(anthropic_fake))
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in str(
        refused.value)
    assert anthropic_fake.pending() == 0 and len(anthropic_fake.usages) == 1


@pytest.mark.parametrize(("tamper", "words"), [
    ("altered", "Invalid `signature` in `thinking` block"),
    ("split", "Invalid `signature` in `thinking` block"),
])
async def test_anthropic_refuses_a_thinking_block_altered_or_left_in_pieces(
        anthropic_fake: anth.AnthropicFake, tamper: str, words: str) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    anthropic_fake.push(anth.Reply(thinking="Call the tool for UTC.", chunk_chars=5,
                                   tool_uses=[anth.ToolUse("get_time", {"tz": "UTC"})]))
    first = await complete(ASK, tools=TOOLS, reasoning_effort="medium",
                           **route(anthropic_fake))
    assistant = first.assistant(thinking_blocks=False)
    if tamper == "altered":
        block = dict(first.message.thinking_blocks[0])
        assistant["thinking_blocks"] = [{**block, "thinking": block["thinking"] + "!"}]
    else:  # the blocks as they streamed, one a delta, never joined
        assistant["thinking_blocks"] = [b for c in first.chunks if c.choices
                                        for b in getattr(c.choices[0].delta,
                                                         "thinking_blocks", None) or []]
        assert len(assistant["thinking_blocks"]) > 2
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete([*ASK, assistant, tool_result(first)], tools=TOOLS,
                       reasoning_effort="medium", **route(anthropic_fake))
    assert words in str(refused.value)


async def test_anthropic_redacted_thinking_must_come_back_byte_for_byte(
        anthropic_fake: anth.AnthropicFake) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    anthropic_fake.push(*[anth.Reply(thinking="Hmm.", redacted=True,
                                     tool_uses=[anth.ToolUse("get_time", {"tz": "UTC"})]),
                          anth.Reply(text="Noon.")])
    first = await complete(ASK, tools=TOOLS, reasoning_effort="medium",
                           **route(anthropic_fake))
    kinds = [b["type"] for b in first.message.thinking_blocks]
    assert kinds == ["thinking", "redacted_thinking"]
    history = [*ASK, first.assistant(), tool_result(first)]
    await complete(history, tools=TOOLS, reasoning_effort="medium", **route(anthropic_fake))
    sent = anthropic_fake.requests[1].body["messages"][1]["content"]
    assert sent[1]["type"] == "redacted_thinking"
    history[1]["thinking_blocks"][1]["data"] = "A" + history[1]["thinking_blocks"][1]["data"]
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete(history, tools=TOOLS, reasoning_effort="medium",
                       **route(anthropic_fake))
    assert "Invalid `data` in `redacted_thinking` block" in str(refused.value)


@pytest.mark.parametrize(("params", "words"), [
    ({"thinking": {"type": "enabled", "budget_tokens": 500}, "max_tokens": 4000},
     "greater than or equal to 1024"),
    ({"thinking": {"type": "enabled", "budget_tokens": 4000}, "max_tokens": 4000},
     "`max_tokens` must be greater than `thinking.budget_tokens`"),
    ({"reasoning_effort": "medium", "temperature": 0.2},
     "`temperature` may only be set to 1 when thinking is enabled"),
])
async def test_anthropic_refuses_bad_thinking_parameters(
        anthropic_fake: anth.AnthropicFake, params: dict[str, Any], words: str) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete(ASK, **params, **route(anthropic_fake))
    assert words in str(refused.value)


async def test_anthropic_refuses_a_tool_use_left_unanswered(
        anthropic_fake: anth.AnthropicFake) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    anthropic_fake.push(anth.Reply(tool_uses=[anth.ToolUse("get_time", {"tz": "UTC"})]))
    first = await complete(ASK, tools=TOOLS, **route(anthropic_fake))
    history = [*ASK, first.assistant(), {"role": "user", "content": "never mind"}]
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete(history, tools=TOOLS, **route(anthropic_fake))
    assert "`tool_use` ids were found without `tool_result` blocks" in str(refused.value)


def test_anthropic_requires_its_headers(anthropic_fake: anth.AnthropicFake) -> None:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": ASK}
    url = f"{anthropic_fake.base_url}/v1/messages"
    status, answer = raw_post(url, body, {"anthropic-version": "2023-06-01"})
    assert (status, answer["error"]["type"]) == (401, "authentication_error")
    status, answer = raw_post(url, body, {"x-api-key": "k"})
    assert (status, answer["type"]) == (400, "error")
    assert "anthropic-version" in answer["error"]["message"]
    status, answer = raw_post(url, {**body, "messages": [{"role": "assistant",
                                                           "content": "hi"}]},
                               {"x-api-key": "k", "anthropic-version": "2023-06-01"})
    assert status == 400 and "first message must use the \"user\" role" in answer["error"][
        "message"]


SYSTEM = "You are a careful assistant. " + " ".join(f"Rule {n}: be exact." for n in range(400))


async def test_anthropic_caches_the_prefix_at_each_breakpoint(
        anthropic_fake: anth.AnthropicFake) -> None:
    """Three requests, each one turn longer, with breakpoints on the system prompt and the
    last message: each reads what the one before it wrote, as Anthropic reports it."""
    points = [{"location": "message", "role": "system"}, {"location": "message", "index": -1}]
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    reports = []
    for turn in range(3):
        anthropic_fake.push(anth.Reply(text=f"Answer {turn}: " + "detail " * 40))
        history.append({"role": "user", "content": f"Question {turn}: " + "why? " * 40})
        done = await complete(history, cache_control_injection_points=points,
                              **route(anthropic_fake))
        history.append({"role": "assistant", "content": done.message.content})
        reports.append((anthropic_fake.usages[-1], done.usage))
    (u1, l1), (u2, l2), (u3, l3) = reports
    assert u1["cache_read_input_tokens"] == 0 and u1["cache_creation_input_tokens"] > 1024
    assert u2["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
    assert u3["cache_read_input_tokens"] == (u2["cache_read_input_tokens"]
                                             + u2["cache_creation_input_tokens"])
    assert u3["cache_creation_input_tokens"] > 0
    for usage, seen in reports:  # what litellm reads from the stream
        assert seen.prompt_tokens_details.cached_tokens == usage["cache_read_input_tokens"]
        assert seen.cache_creation_input_tokens == usage["cache_creation_input_tokens"]
        assert seen.prompt_tokens == (usage["input_tokens"] + usage["cache_read_input_tokens"]
                                      + usage["cache_creation_input_tokens"])


async def test_anthropic_reads_nothing_from_cache_without_breakpoints(
        anthropic_fake: anth.AnthropicFake) -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(3):
        anthropic_fake.push(anth.Reply(text=f"Answer {turn}."))
        history.append({"role": "user", "content": f"Question {turn}"})
        done = await complete(history, **route(anthropic_fake))
        history.append({"role": "assistant", "content": done.message.content})
    assert [u["cache_read_input_tokens"] for u in anthropic_fake.usages] == [0, 0, 0]
    assert anthropic_fake.cache == {}


async def test_anthropic_refuses_a_fifth_breakpoint(anthropic_fake: anth.AnthropicFake) -> None:
    """litellm's injection points stop at 4 themselves; blocks the caller marks do not."""
    litellm_errors = pytest.importorskip("litellm").exceptions
    mark = {"type": "ephemeral"}
    history = [{"role": "user" if i % 2 == 0 else "assistant",
                "content": [{"type": "text", "text": f"m{i}", "cache_control": mark}]}
               for i in range(5)]
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete(history, **route(anthropic_fake))
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(
        refused.value)


@pytest.mark.parametrize(("reply", "kind", "status"), [
    (anth.error(429, retry_after=7), "rate_limit_error", 429),
    (anth.error(529), "overloaded_error", None),
    (anth.error(400), "prompt is too long: 210000 tokens > 200000 maximum", 400),
    (anth.error(500), "api_error", 500),
])
async def test_anthropic_scripted_errors_reach_litellm(
        anthropic_fake: anth.AnthropicFake, reply: anth.Reply, kind: str,
        status: int | None) -> None:
    anthropic_fake.push(reply)
    with pytest.raises(Exception) as failed:
        await complete(ASK, **route(anthropic_fake))
    assert kind in str(failed.value)
    if status is not None:
        assert getattr(failed.value, "status_code", None) == status
    if reply.status == 429:
        headers = failed.value.litellm_response_headers  # type: ignore[attr-defined]
        assert headers["retry-after"] == "7"


async def test_anthropic_refuses_a_prompt_past_its_window(
        anthropic_fake: anth.AnthropicFake) -> None:
    litellm = pytest.importorskip("litellm")
    anthropic_fake.window = 50
    with pytest.raises(litellm.exceptions.ContextWindowExceededError) as refused:
        await complete([{"role": "user", "content": "long " * 100}], **route(anthropic_fake))
    assert "tokens > 50 maximum" in str(refused.value)
    assert anthropic_fake.usages == []


async def test_anthropic_exhausted_script_says_so_unless_a_reply_repeats(
        anthropic_fake: anth.AnthropicFake) -> None:
    with pytest.raises(Exception, match="fake Anthropic script exhausted"):
        await complete(ASK, **route(anthropic_fake))
    anthropic_fake.repeat = anth.Reply(text="Again.")
    for _ in range(2):
        assert (await complete(ASK, **route(anthropic_fake))).message.content == "Again."


async def test_anthropic_answers_without_stream_in_one_message(
        anthropic_fake: anth.AnthropicFake) -> None:
    litellm = pytest.importorskip("litellm")
    anthropic_fake.push(anth.Reply(thinking="Think first.", text="Whole.",
                                   tool_uses=[anth.ToolUse("get_time", {"tz": "UTC"})]))
    done = await litellm.acompletion(messages=ASK, tools=TOOLS, reasoning_effort="medium",
                                     num_retries=0, **route(anthropic_fake))
    message = done.choices[0].message
    assert "stream" not in anthropic_fake.requests[0].body
    assert (message.content, message.reasoning_content) == ("Whole.", "Think first.")
    assert message.thinking_blocks[0]["signature"] == anthropic_fake.sign("Think first.")
    assert json.loads(message.tool_calls[0].function.arguments) == {"tz": "UTC"}
    assert done.choices[0].finish_reason == "tool_calls"
