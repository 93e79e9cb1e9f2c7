"""The Gemini fake speaks streamGenerateContent and enforces Gemini 3's rules, through litellm.

A tool round trip passes when the tool call ids come back verbatim (litellm carries the
thought signature inside them); an altered signature is Gemini's 400 (litellm 1.110 then
resends with a placeholder); a stripped one is replaced by litellm with Google's documented
placeholder, which the fake counts (and refuses when strict).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from tests.fakes import gemini_server as gem
from tests.providers import (
    ASK,
    TOOLS,
    complete,
    gemini_fake,
    raw_post,
    route,
    tool_result,
)

pytestmark = pytest.mark.anyio
_ = gemini_fake  # a fixture, used by name below


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
    second = await complete([*ASK, first.assistant(), tool_result(first)], tools=TOOLS,
                            reasoning_effort="medium", **route(gemini_fake))
    assert second.message.content == "It is noon."
    model_turn = gem.camel(gemini_fake.requests[1].body)["contents"][1]
    assert model_turn["parts"][0]["thoughtSignature"] == first.message.tool_calls[0].id.split(
        "__thought__")[1]
    assert gemini_fake.skipped_signatures == 0


def _resends_refused_signatures() -> bool:
    """Whether this litellm resends a request Gemini refused for a replayed thought signature
    with Google's placeholder in place of each signature (1.110 does; 1.106 does not)."""
    return importlib.util.find_spec(
        "litellm.llms.vertex_ai.gemini.rejected_thought_signature_retry") is not None


def _sent_signatures(request: Any) -> list[str]:
    return [p["thoughtSignature"] for c in gem.camel(request.body)["contents"]
            for p in c.get("parts", []) if "functionCall" in p and "thoughtSignature" in p]


@pytest.mark.parametrize("strict", [False, True])
async def test_gemini_refuses_an_altered_thought_signature(
        gemini_fake: gem.GeminiFake, strict: bool) -> None:
    """An altered signature is Gemini's 400. litellm 1.110 then sends the request again with
    Google's placeholder in its place: Gemini (and the fake) take that, counted, and a strict
    fake refuses it too. litellm 1.106 gives up at the first 400."""
    litellm_errors = pytest.importorskip("litellm").exceptions
    gemini_fake.strict = strict
    first = await _gemini_tool_call(gemini_fake)
    assistant = first.assistant()
    call_id = assistant["tool_calls"][0]["id"]
    altered = assistant["tool_calls"][0]["id"] = call_id[:-6] + "AAAAA="
    gemini_fake.push(gem.Reply(text="It is noon."))
    history = [*ASK, assistant, {**tool_result(first), "tool_call_id": altered}]
    resends = _resends_refused_signatures()
    if resends and not strict:
        done = await complete(history, tools=TOOLS, reasoning_effort="medium",
                              **route(gemini_fake))
        assert done.message.content == "It is noon."
        assert gemini_fake.skipped_signatures == 1
    else:
        with pytest.raises(litellm_errors.BadRequestError) as refused:
            await complete(history, tools=TOOLS, reasoning_effort="medium",
                           **route(gemini_fake))
        assert "Corrupted thought signature." in str(refused.value)
    assert _sent_signatures(gemini_fake.requests[1]) == [altered.split("__thought__")[1]]
    assert gemini_fake.refusals == ["Corrupted thought signature."] * (1 + (resends and strict))
    if resends:
        [again] = gemini_fake.requests[2:]
        assert _sent_signatures(again)[0] in gem.PLACEHOLDERS


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
    history = [*ASK, assistant, {**tool_result(first), "tool_call_id": bare}]
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
        await complete([*ASK, assistant, {**tool_result(first), "tool_call_id": bare}],
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
    status, answer = raw_post(url, body, {})
    assert (status, answer["error"]["status"]) == (403, "PERMISSION_DENIED")
    gemini_fake.push(gem.Reply(text="Hi."))
    status, answer = raw_post(url + "?key=k", body, {})
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
