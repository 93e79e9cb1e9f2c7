"""The Ollama fake speaks /api/chat NDJSON, /api/show and /api/tags, through litellm.

Thinking and tool calls (arguments as objects; ids as Ollama 0.12.10 and later send them, or
none as older servers did) round-trip; thinking to a model
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


@pytest.mark.parametrize("ids", [True, False], ids=["ollama-0.12.10+", "older"])
async def test_ollama_thinking_tool_round_trip(ollama_fake: oll.OllamaFake, ids: bool) -> None:
    """Ollama gives each tool call an id since 0.12.10 (older servers none, and litellm makes
    one up). The call goes back with its arguments as an object; an id sent with it (litellm
    1.110 sends its own) is the one the tool message answers."""
    ollama_fake.tool_call_ids = ids
    ollama_fake.push(oll.Reply(thinking="I need the tool.",
                               tool_calls=[oll.ToolCall("get_time", {"tz": "UTC"})]),
                     oll.Reply(text="It is noon."))
    first = await complete(ASK, tools=TOOLS, reasoning_effort="medium", **route(ollama_fake))
    assert ollama_fake.chats[0]["think"] is True
    assert first.message.reasoning_content == "I need the tool."
    call_id = first.message.tool_calls[0].id
    assert call_id
    second = await complete([*ASK, first.assistant(), tool_result(first)], tools=TOOLS,
                            reasoning_effort="medium", **route(ollama_fake))
    assert second.message.content == "It is noon."
    history = ollama_fake.chats[1]["messages"]
    [sent] = history[1]["tool_calls"]
    assert sent["function"] == {"name": "get_time", "arguments": {"tz": "UTC"}}
    assert sent.get("id", call_id) == call_id
    assert history[2]["role"] == "tool" and history[2]["content"] == "12:00"
    assert history[2].get("tool_call_id", call_id) == call_id


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


def test_ollama_takes_tool_call_ids_as_strings_only(ollama_fake: oll.OllamaFake) -> None:
    """``id`` on a tool call and ``tool_call_id`` on a tool message are Ollama's own fields
    (strings); another type is Go's unmarshal error naming the field."""
    ollama_fake.push(oll.Reply(text="Noon."))

    def history(call_id: object, answer_id: object) -> dict[str, object]:
        call = {"id": call_id, "function": {"name": "get_time", "arguments": {"tz": "UTC"}}}
        return {"model": "qwen3", "stream": False, "messages": [
            *ASK, {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": "12:00", "tool_call_id": answer_id}]}

    url = f"{ollama_fake.base_url}/api/chat"
    status, answer = raw_post(url, history("call_k3v9x2ab", "call_k3v9x2ab"), {})
    assert status == 200 and answer["message"]["content"] == "Noon."
    status, answer = raw_post(url, history(7, "call_k3v9x2ab"), {})
    assert (status, answer["error"]) == (400, "json: cannot unmarshal number into Go struct "
                                              "field ToolCall.messages.tool_calls.id of type "
                                              "string")
    status, answer = raw_post(url, history("call_k3v9x2ab", ["x"]), {})
    assert (status, answer["error"]) == (400, "json: cannot unmarshal array into Go struct "
                                              "field Message.messages.tool_call_id of type "
                                              "string")


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
