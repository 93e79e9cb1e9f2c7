"""The provider fakes speak their wire formats and enforce their providers' rules.

Each test drives litellm itself (``acompletion`` with ``stream=True`` and the fake as
``api_base``), no other tui-agent code, so what passes here is what litellm really sends
and reads: a history rebuilt the way FACTS.md says is right passes, and the mistakes the
real APIs refuse (a dropped thinking block, an altered signature) come back as the
provider's 400 through litellm.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.fakes import anthropic_server as anth
from tests.fakes import gemini_server as gem
from tests.fakes import ollama_server as oll
from tests.providers import (
    OLLAMA_MODEL,
    anthropic_fake,
    complete,
    gemini_fake,
    ollama_fake,
    route,
)

pytestmark = pytest.mark.anyio
_ = (anthropic_fake, gemini_fake, ollama_fake)  # fixtures, used by name below

TOOLS = [{"type": "function", "function": {
    "name": "get_time", "description": "The time in a zone.",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}},
                   "required": ["tz"]}}}]
ASK = [{"role": "user", "content": "What time is it in UTC?"}]


def _tool_result(first: Any, answer: str = "12:00") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": first.message.tool_calls[0].id, "content": answer}


def _raw_post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


# -- Anthropic ---------------------------------------------------------------------------


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
    history = [*ASK, first.assistant(), _tool_result(first)]
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
    history = [*ASK, first.assistant(thinking_blocks=False), _tool_result(first)]
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
        await complete([*ASK, assistant, _tool_result(first)], tools=TOOLS,
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
    history = [*ASK, first.assistant(), _tool_result(first)]
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
    status, answer = _raw_post(url, body, {"anthropic-version": "2023-06-01"})
    assert (status, answer["error"]["type"]) == (401, "authentication_error")
    status, answer = _raw_post(url, body, {"x-api-key": "k"})
    assert (status, answer["type"]) == (400, "error")
    assert "anthropic-version" in answer["error"]["message"]
    status, answer = _raw_post(url, {**body, "messages": [{"role": "assistant",
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


async def test_anthropic_exhausted_script_says_so(anthropic_fake: anth.AnthropicFake) -> None:
    with pytest.raises(Exception, match="script exhausted"):
        await complete(ASK, **route(anthropic_fake))


# -- Gemini ------------------------------------------------------------------------------


async def test_gemini_streams_text_with_its_usage(gemini_fake: gem.GeminiFake) -> None:
    gemini_fake.push(gem.Reply(text="Hello from Gemini.", thoughts="Say hello.",
                               cached_tokens=12))
    done = await complete(ASK, reasoning_effort="low", **route(gemini_fake))
    sent = gemini_fake.requests[0]
    assert sent.path == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent"
    assert sent.query == {"alt": "sse"} and sent.headers["x-goog-api-key"] == "fake-key"
    assert sent.body["generationConfig"]["thinkingConfig"]["includeThoughts"] is True
    assert done.message.content == "Hello from Gemini."
    assert done.message.reasoning_content == "Say hello."
    assert done.usage.prompt_tokens_details.cached_tokens == 12
    assert done.usage.completion_tokens_details.reasoning_tokens == len("Say hello.") // 4


async def test_gemini_sends_thoughts_only_when_asked(gemini_fake: gem.GeminiFake) -> None:
    gemini_fake.push(gem.Reply(text="Plain.", thoughts="Hidden thoughts."))
    done = await complete(ASK, **route(gemini_fake))
    assert done.message.content == "Plain."
    assert not getattr(done.message, "reasoning_content", None)


async def _gemini_tool_call(fake: gem.GeminiFake) -> Any:
    fake.push(gem.Reply(thoughts="Use the tool.",
                        function_calls=[gem.FunctionCall("get_time", {"tz": "UTC"})]))
    return await complete(ASK, tools=TOOLS, reasoning_effort="medium", **route(fake))


async def test_gemini_tool_round_trip_passes_with_the_ids_kept_verbatim(
        gemini_fake: gem.GeminiFake) -> None:
    first = await _gemini_tool_call(gemini_fake)
    assert "__thought__" in first.message.tool_calls[0].id
    gemini_fake.push(gem.Reply(text="It is noon."))
    second = await complete([*ASK, first.assistant(), _tool_result(first)], tools=TOOLS,
                            reasoning_effort="medium", **route(gemini_fake))
    assert second.message.content == "It is noon."
    model_turn = gem.camel(gemini_fake.requests[1].body)["contents"][1]
    assert model_turn["parts"][0]["thoughtSignature"] == first.message.tool_calls[0].id.split(
        "__thought__")[1]
    assert gemini_fake.skipped_signatures == 0


async def test_gemini_refuses_an_altered_thought_signature(gemini_fake: gem.GeminiFake) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    first = await _gemini_tool_call(gemini_fake)
    assistant = first.assistant()
    call_id = assistant["tool_calls"][0]["id"]
    altered = assistant["tool_calls"][0]["id"] = call_id[:-6] + "AAAAA="
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete([*ASK, assistant, {**_tool_result(first), "tool_call_id": altered}],
                       tools=TOOLS,
                       reasoning_effort="medium", **route(gemini_fake))
    assert "Corrupted thought signature." in str(refused.value)


@pytest.mark.parametrize("strict", [False, True])
async def test_gemini_notices_a_stripped_thought_signature(
        gemini_fake: gem.GeminiFake, strict: bool) -> None:
    """Stripped from the id, the signature is replaced by litellm with Google's documented
    placeholder: Gemini accepts that (and the fake counts it); ``strict`` refuses it."""
    litellm_errors = pytest.importorskip("litellm").exceptions
    gemini_fake.strict = strict
    first = await _gemini_tool_call(gemini_fake)
    assistant = first.assistant()
    bare = assistant["tool_calls"][0]["id"].split("__thought__")[0]
    assistant["tool_calls"][0]["id"] = bare
    history = [*ASK, assistant, {**_tool_result(first), "tool_call_id": bare}]
    gemini_fake.push(gem.Reply(text="It is noon."))
    if strict:
        with pytest.raises(litellm_errors.BadRequestError) as refused:
            await complete(history, tools=TOOLS, reasoning_effort="medium",
                           **route(gemini_fake))
        assert "Corrupted thought signature." in str(refused.value)
    else:
        await complete(history, tools=TOOLS, reasoning_effort="medium", **route(gemini_fake))
        assert gemini_fake.skipped_signatures == 1


async def test_gemini_refuses_a_function_call_with_no_signature(
        gemini_fake: gem.GeminiFake) -> None:
    """A model litellm does not know as Gemini 3 gets no placeholder: the call goes back
    bare, and a fake enforcing signatures refuses it with Gemini's own words."""
    litellm_errors = pytest.importorskip("litellm").exceptions
    gemini_fake.require_signatures = True
    gemini_fake.push(gem.Reply(function_calls=[gem.FunctionCall("get_time", {"tz": "UTC"})]))
    where = {**route(gemini_fake), "model": "gemini/gemini-2.5-flash"}
    first = await complete(ASK, tools=TOOLS, **where)
    assistant = first.assistant()
    bare = assistant["tool_calls"][0]["id"].split("__thought__")[0]
    assistant["tool_calls"][0]["id"] = bare
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete([*ASK, assistant, {**_tool_result(first), "tool_call_id": bare}],
                       tools=TOOLS, **where)
    assert "Function call is missing a thought_signature in functionCall parts" in str(
        refused.value)


async def test_gemini_refuses_a_function_call_left_unanswered(
        gemini_fake: gem.GeminiFake) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    first = await _gemini_tool_call(gemini_fake)
    history = [*ASK, first.assistant(), {"role": "user", "content": "never mind"}]
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete(history, tools=TOOLS, **route(gemini_fake))
    assert "function response turn comes immediately after a function call turn" in str(
        refused.value)


def test_gemini_requires_a_key(gemini_fake: gem.GeminiFake) -> None:
    url = f"{gemini_fake.base_url}/models/gemini-3-pro-preview:generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    status, answer = _raw_post(url, body, {})
    assert (status, answer["error"]["status"]) == (403, "PERMISSION_DENIED")
    gemini_fake.push(gem.Reply(text="Hi."))
    status, answer = _raw_post(url + "?key=k", body, {})
    assert status == 200 and answer["candidates"][0]["content"]["parts"] == [{"text": "Hi."}]


@pytest.mark.parametrize(("reply", "words", "status"), [
    # litellm 1.106 turns a streamed 503 into MidStreamFallbackError with status 500: the
    # body, with its code 503 and UNAVAILABLE, is only in the message.
    (gem.error(503), "The model is overloaded. Please try again later.", None),
    (gem.error(429), "RESOURCE_EXHAUSTED", 429),
    (gem.error(400), "The input token count (1048577) exceeds the maximum number", 400),
    (gem.error(500), "INTERNAL", 500),
])
async def test_gemini_scripted_errors_reach_litellm(
        gemini_fake: gem.GeminiFake, reply: gem.Reply, words: str, status: int | None) -> None:
    gemini_fake.push(reply)
    with pytest.raises(Exception) as failed:
        await complete(ASK, **route(gemini_fake))
    assert words in str(failed.value)
    assert f'"code": {reply.status}, ' in str(failed.value)
    if status is not None:
        assert getattr(failed.value, "status_code", None) == status


async def test_gemini_refuses_a_prompt_past_its_window(gemini_fake: gem.GeminiFake) -> None:
    litellm = pytest.importorskip("litellm")
    gemini_fake.window = 40
    with pytest.raises(litellm.exceptions.BadRequestError) as refused:
        await complete([{"role": "user", "content": "long " * 100}], **route(gemini_fake))
    assert "exceeds the maximum number of tokens allowed (40)." in str(refused.value)


# -- Ollama ------------------------------------------------------------------------------


async def test_ollama_streams_text_with_its_counts(ollama_fake: oll.OllamaFake) -> None:
    ollama_fake.push(oll.Reply(text="Hello from Ollama."))
    done = await complete(ASK, num_ctx=8192, **route(ollama_fake))
    assert done.message.content == "Hello from Ollama."
    sent = ollama_fake.chats[0]
    assert sent["options"]["num_ctx"] == 8192 and sent["stream"] is True
    assert done.usage.prompt_tokens > 0 and done.usage.completion_tokens > 0
    assert ollama_fake.truncations == []


async def test_ollama_thinking_tool_round_trip(ollama_fake: oll.OllamaFake) -> None:
    ollama_fake.push(oll.Reply(thinking="I need the tool.",
                               tool_calls=[oll.ToolCall("get_time", {"tz": "UTC"})]),
                     oll.Reply(text="It is noon."))
    first = await complete(ASK, tools=TOOLS, reasoning_effort="medium", **route(ollama_fake))
    assert ollama_fake.chats[0]["think"] is True
    assert first.message.reasoning_content == "I need the tool."
    assert first.message.tool_calls[0].id  # Ollama sends none: litellm makes one up
    second = await complete([*ASK, first.assistant(), _tool_result(first)], tools=TOOLS,
                            reasoning_effort="medium", **route(ollama_fake))
    assert second.message.content == "It is noon."
    history = ollama_fake.chats[1]["messages"]
    assert history[1]["tool_calls"] == [{"function": {"name": "get_time",
                                                      "arguments": {"tz": "UTC"}}}]
    assert history[2]["role"] == "tool" and history[2]["content"] == "12:00"


async def test_ollama_refuses_thinking_to_a_model_that_cannot(
        ollama_fake: oll.OllamaFake) -> None:
    litellm_errors = pytest.importorskip("litellm").exceptions
    ollama_fake.models["llama3:latest"] = oll.Model(capabilities=("completion", "tools"),
                                                    architecture="llama")
    with pytest.raises(litellm_errors.BadRequestError) as refused:
        await complete(ASK, reasoning_effort="low",
                       **{**route(ollama_fake), "model": "ollama_chat/llama3"})
    assert r'{"error": "\"llama3\" does not support thinking"}' in str(refused.value)
    assert getattr(refused.value, "status_code", None) == 400


async def test_ollama_answers_404_for_an_unknown_model(ollama_fake: oll.OllamaFake) -> None:
    with pytest.raises(Exception) as failed:
        await complete(ASK, **{**route(ollama_fake), "model": "ollama_chat/nope"})
    assert r'model \"nope\" not found, try pulling it first' in str(failed.value)
    assert getattr(failed.value, "status_code", None) == 404


def test_ollama_refuses_tool_arguments_sent_as_a_string(ollama_fake: oll.OllamaFake) -> None:
    call = {"function": {"name": "get_time", "arguments": '{"tz": "UTC"}'}}
    status, answer = _raw_post(f"{ollama_fake.base_url}/api/chat", {
        "model": "qwen3", "messages": [*ASK, {"role": "assistant", "content": "",
                                              "tool_calls": [call]}]}, {})
    assert status == 400 and "cannot unmarshal string" in answer["error"]


async def test_ollama_cuts_a_long_prompt_silently_to_num_ctx(
        ollama_fake: oll.OllamaFake) -> None:
    long = [{"role": "user", "content": "word " * 4000}]  # about 5,000 tokens
    ollama_fake.push(oll.Reply(text="Short answer."), oll.Reply(text="Whole answer."))
    cut = await complete(long, **route(ollama_fake))
    assert cut.message.content == "Short answer."  # no error: the cut is silent
    assert cut.usage.prompt_tokens == oll.DEFAULT_NUM_CTX
    [truncation] = ollama_fake.truncations
    assert truncation.num_ctx == oll.DEFAULT_NUM_CTX
    assert truncation.prompt_tokens > oll.DEFAULT_NUM_CTX
    whole = await complete(long, num_ctx=16384, **route(ollama_fake))
    assert whole.usage.prompt_tokens == truncation.prompt_tokens
    assert len(ollama_fake.truncations) == 1


def test_ollama_reports_its_models_window_to_litellm(ollama_fake: oll.OllamaFake) -> None:
    litellm = pytest.importorskip("litellm")
    ollama_fake.models["qwen3:latest"] = oll.Model(context_length=32768)
    info = litellm.get_model_info(OLLAMA_MODEL, api_base=ollama_fake.base_url)
    assert info["max_input_tokens"] == 32768 and info["supports_function_calling"]
    status, shown = _raw_post(f"{ollama_fake.base_url}/api/show", {"model": "qwen3"}, {})
    assert status == 200 and shown["model_info"]["qwen3.context_length"] == 32768
    assert "thinking" in shown["capabilities"]
    with urllib.request.urlopen(f"{ollama_fake.base_url}/api/tags", timeout=10) as listing:
        assert [m["name"] for m in json.load(listing)["models"]] == ["qwen3:latest"]


async def test_ollama_answers_stream_false_in_one_object(ollama_fake: oll.OllamaFake) -> None:
    litellm = pytest.importorskip("litellm")
    ollama_fake.push(oll.Reply(text="Whole.", thinking="Thought.",
                               tool_calls=[oll.ToolCall("get_time", {"tz": "UTC"})]))
    done = await litellm.acompletion(messages=ASK, tools=TOOLS, reasoning_effort="low",
                                     num_retries=0, **route(ollama_fake))
    message = done.choices[0].message
    assert ollama_fake.chats[0]["stream"] is False
    assert (message.content, message.reasoning_content) == ("Whole.", "Thought.")
    assert json.loads(message.tool_calls[0].function.arguments) == {"tz": "UTC"}
