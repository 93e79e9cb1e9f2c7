"""The Ollama fake speaks /api/chat NDJSON, /api/show and /api/tags, through litellm.

Thinking and tool calls (arguments as objects, no ids) round-trip; thinking to a model
without the capability and an unknown model are refused as Ollama refuses them; a prompt
longer than ``num_ctx`` is cut silently, and the fake records the cut.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.fakes import ollama_server as oll
from tests.providers import (
    ASK,
    OLLAMA_MODEL,
    TOOLS,
    complete,
    ollama_fake,
    raw_post,
    route,
    tool_result,
)

pytestmark = pytest.mark.anyio
_ = ollama_fake  # a fixture, used by name below


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
    second = await complete([*ASK, first.assistant(), tool_result(first)], tools=TOOLS,
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
    status, answer = raw_post(f"{ollama_fake.base_url}/api/chat", {
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
    status, shown = raw_post(f"{ollama_fake.base_url}/api/show", {"model": "qwen3"}, {})
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
