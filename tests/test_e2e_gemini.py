"""The whole loop through the Gemini fake, driven as a user drives tui-agent: ``tui-agent
run`` with a config file, a real MCP server over stdio, and a Gemini 3 model served by
tests/fakes/gemini_server.py in its strict mode: every function call must come back with
the thought signature the fake gave it (not even Google's documented placeholders pass),
so a signature lost anywhere (the stream's assembly, the history, the session file, a
compaction) fails the request.

Plain text with the provider's counts; a tool round trip with thinking on; resume of a
conversation whose tool calls carry signatures and another tool turn; automatic
compaction (a small ``context_window``) of such a conversation and a tool turn after it,
and of a long tool turn midway; 503 retried, a refusal in plain words, the "input token
count exceeds" refusal driving a compaction; two calls in one step (only the first
signed); the implicitly cached tokens read and priced at the cached rate; and a preview
litellm has no price for costs unknown.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_kit import entry_point, ok, run, tool_round_trip, write_config
from tests.fakes.gemini_server import FunctionCall, GeminiFake, Reply, camel, error
from tests.providers import GEMINI_MODEL
from tui_agent.core.llm import load_litellm

_ = entry_point
pytestmark = pytest.mark.usefixtures("entry_point")

MODEL = "gemini/gemini-3.1-pro-preview"
"""A Gemini 3 model (the fake requires its signatures) that litellm has a price for."""
SUMMARY = "SUMMARY: the user asked for sums; the add tool answered each."


class Recording(GeminiFake):
    """The fake in strict mode, keeping the ``usageMetadata`` it reports for each request
    it serves (the counts the usage and the cost are checked against)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(strict=True, **options)
        self.usages: list[dict[str, int]] = []

    def _events(self, reply: Reply, prompt: int, include: bool,
                model: str) -> list[dict[str, Any]]:
        events = super()._events(reply, prompt, include, model)
        self.usages.append(dict(events[-1]["usageMetadata"]))
        return events


@pytest.fixture
def gemini() -> Iterator[Recording]:
    with Recording() as fake:
        yield fake


def config(tmp_path: Path, fake: GeminiFake, **settings: Any) -> Path:
    return write_config(tmp_path / "c.toml", MODEL, fake.base_url, api_key="fake-key",
                        **settings)


def thinking_config(tmp_path: Path, fake: GeminiFake, **settings: Any) -> Path:
    return config(tmp_path, fake, reasoning_effort="medium", **settings)


def add_turn(a: int, b: int, answer: str) -> list[Reply]:
    """A tool turn: think, call ``t__add``, think again, answer."""
    return [Reply(thoughts=f"I should add {a} and {b} with the tool.",
                  function_calls=[FunctionCall("t__add", {"a": a, "b": b})]),
            Reply(thoughts=f"The tool said {a + b}.", text=answer)]


def served_all(fake: Recording) -> None:
    """The fake answered every request it got (a missing or altered signature is a 400),
    and no function call came back with a placeholder in place of its signature."""
    assert len(fake.usages) == len(fake.requests), [r.body for r in fake.requests]
    assert fake.skipped_signatures == 0


def signatures(body: dict[str, Any]) -> list[str]:
    """The thought signatures on the function calls a request sends back."""
    return [p["thoughtSignature"] for c in camel(body)["contents"] for p in c.get("parts", [])
            if "functionCall" in p and "thoughtSignature" in p]


def test_plain_text_with_the_providers_counts(gemini: Recording, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    gemini.push(Reply(text="Paris is the capital of France."))
    result = ok(run(capsys, config(tmp_path, gemini, server=False), "capital?"))
    assert result.text() == "Paris is the capital of France."
    assert result.kinds() == ["session", *["text"] * 4, "done"]
    assert "thinkingConfig" not in str(camel(gemini.requests[0].body))  # none asked for
    [reported] = gemini.usages
    usage = result.usage
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (
        reported["promptTokenCount"], reported["candidatesTokenCount"],
        reported["totalTokenCount"])
    assert usage["cache_read_tokens"] == usage["reasoning_tokens"] == 0


def test_a_tool_turn_with_thinking_then_resumed_with_another(
        gemini: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The function call goes back with the thought signature the fake gave it (it rides in
    the tool call's id); the session file keeps it, so a resumed run sends the earlier
    calls' signatures back verbatim and continues with another tool turn, accepted."""
    cfg = thinking_config(tmp_path, gemini)
    gemini.push(*add_turn(2, 3, "2 + 3 = 5."))
    first = ok(run(capsys, cfg, "add 2 and 3"))
    tool_round_trip(first, answer="5")
    assert first.reasoning() == "I should add 2 and 3 with the tool.The tool said 5."
    assert first.text() == "2 + 3 = 5."
    served_all(gemini)
    thinking = camel(gemini.requests[0].body)["generationConfig"]["thinkingConfig"]
    assert thinking == {"thinkingLevel": "medium", "includeThoughts": True}
    [signature] = signatures(gemini.requests[1].body)
    assert first.usage["reasoning_tokens"] == sum(u.get("thoughtsTokenCount", 0)
                                                  for u in gemini.usages) > 0

    gemini.push(*add_turn(5, 6, "5 + 6 = 11."))
    resumed = ok(run(capsys, cfg, "now add 5 and 6", "--resume", first.session))
    assert resumed.of("session")[0]["resumed"] is True
    tool_round_trip(resumed, answer="11")
    served_all(gemini)
    again = signatures(gemini.requests[-1].body)
    assert len(again) == 2 and again[0] == signature  # the resumed call's, verbatim


def test_compaction_of_a_conversation_with_signatures_then_a_tool_turn(
        gemini: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A small ``context_window``: the third tool turn starts past the compaction point,
    the earlier turns become a summary (one request), and the tool turn after it goes back
    with its signature, accepted."""
    cfg = thinking_config(tmp_path, gemini, context_window=1400)
    note = "note " * 250
    gemini.push(*add_turn(1, 1, "1 + 1 = 2."), *add_turn(2, 3, "2 + 3 = 5."))
    first = ok(run(capsys, cfg, f"add 1 and 1; {note}"))
    ok(run(capsys, cfg, f"add 2 and 3; {note}", "--resume", first.session))
    gemini.push(Reply(thoughts="Summarize.", text=SUMMARY), *add_turn(4, 4, "4 + 4 = 8."))
    third = ok(run(capsys, cfg, f"add 4 and 4; {note}", "--resume", first.session))
    [compaction] = third.of("compaction")
    assert compaction["reason"] == "auto" and compaction["summary"] == SUMMARY
    tool_round_trip(third, answer="8")
    served_all(gemini)
    last = camel(gemini.requests[-1].body)
    assert SUMMARY in str(last["contents"][0]) and "add 1 and 1" not in str(last)
    assert len(signatures(gemini.requests[-1].body)) >= 1


def test_a_long_tool_turn_compacts_midway_and_its_calls_keep_their_signatures(
        gemini: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One turn of six tool calls past the compaction point: the turn's start becomes a
    summary, so every later step is checked as the current turn's, and each still carries
    its own signature."""
    cfg = thinking_config(tmp_path, gemini, context_window=2250)
    # The rounds are sized for this tool set: the agent tool would shift where it compacts.
    cfg.write_text(cfg.read_text() + "\n[agents]\nmax_depth = 0\n")
    rounds = [Reply(thoughts=f"Echo round {i}.", function_calls=[FunctionCall(
        "t__echo", {"text": f"{i} " + "word " * 150})]) for i in range(6)]
    gemini.push(*rounds[:4], Reply(text=SUMMARY), *rounds[4:],
                Reply(thoughts="All six came back.", text="Echoed six times."))
    result = ok(run(capsys, cfg, "echo six times"))
    [compaction] = result.of("compaction")
    assert compaction["reason"] == "auto" and compaction["summary"] == SUMMARY
    kinds = result.kinds()
    assert 0 < kinds.index("compaction") < len(kinds) - 1 - kinds[::-1].index("tool_call")
    assert len(result.of("tool_result")) == 6 and result.text() == "Echoed six times."
    served_all(gemini)
    last = camel(gemini.requests[-1].body)
    assert SUMMARY in str(last["contents"][0]) and "echo six times" not in str(last)
    steps = [c for c in last["contents"] if c["role"] == "model"]
    assert len(signatures(gemini.requests[-1].body)) == len(steps) >= 2


def test_unavailable_is_retried_and_a_refusal_reads_in_plain_words(
        gemini: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = config(tmp_path, gemini, server=False, max_retries=2)
    gemini.push(error(503), Reply(text="Back again."))
    retried = ok(run(capsys, cfg, "hello"))
    [retry] = retried.of("retry")
    assert "overloaded" in retry["reason"].lower() and "b'" not in retry["reason"]
    assert retried.text() == "Back again." and len(gemini.requests) == 2

    gemini.push(error(503), error(503), error(503))
    refused = run(capsys, cfg, "hello again", "--resume", retried.session)
    assert refused.code == 1 and len(refused.of("retry")) == 2
    [failure] = refused.of("error")
    message = failure["message"]
    assert "The model is overloaded. Please try again later." in message
    assert "b'" not in message and '{"error"' not in message and "\\n" not in message


def test_input_too_long_compacts_and_the_request_goes_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Gemini's "The input token count (N) exceeds the maximum number of tokens allowed
    (M)." (far below the model's own window, so nothing is compacted before): the earlier
    turns are summarized and the same request goes again, accepted."""
    with Recording(window=1500) as fake:
        cfg = config(tmp_path, fake, server=False)
        fake.push(Reply(text="Noted one."), Reply(text="Noted two."))
        first = ok(run(capsys, cfg, "remember this: " + "one " * 500))
        ok(run(capsys, cfg, "and this: " + "two " * 500, "--resume", first.session))
        fake.push(Reply(text=SUMMARY), Reply(text="All three noted."))
        third = run(capsys, cfg, "and this: " + "three " * 300, "--resume", first.session)
    ok(third)
    [compaction] = third.of("compaction")
    assert compaction["reason"] == "overflow" and compaction["summary"] == SUMMARY
    assert third.text() == "All three noted."
    # two turns served; the third refused as too long; the summary; the third again
    assert len(fake.requests) == 5 and len(fake.usages) == 4
    assert SUMMARY in str(camel(fake.requests[-1].body)["contents"][0])
    assert "three " * 300 in str(camel(fake.requests[-1].body)["contents"][-1])


def test_implicitly_cached_tokens_are_read_and_priced_at_the_cached_rate(
        gemini: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Gemini caches by itself: nothing is marked, ``cachedContentTokenCount`` shows as
    ``cache_read_tokens``, and the cost is the list price computed here by hand (cached
    tokens at their own rate, thoughts as output)."""
    cfg = thinking_config(tmp_path, gemini, server=False,
                          system_prompt="You answer in one short sentence. " * 60)
    gemini.push(Reply(thoughts="A greeting.", text="Hello!"),
                Reply(thoughts="Again.", text="Hello again!", cached_tokens=400))
    first = ok(run(capsys, cfg, "hi"))
    second = ok(run(capsys, cfg, "hi again", "--resume", first.session))
    assert "cache_control" not in str(gemini.requests[1].body)
    price = load_litellm().model_cost[MODEL]
    for result, reported in ((first, gemini.usages[0]), (second, gemini.usages[1])):
        cached = reported.get("cachedContentTokenCount", 0)
        output = reported["candidatesTokenCount"] + reported.get("thoughtsTokenCount", 0)
        by_hand = ((reported["promptTokenCount"] - cached) * price["input_cost_per_token"]
                   + cached * price["cache_read_input_token_cost"]
                   + output * price["output_cost_per_token"])
        usage = result.usage
        assert usage["cache_read_tokens"] == cached
        assert usage["reasoning_tokens"] == reported["thoughtsTokenCount"] > 0
        assert usage["cost"] == pytest.approx(by_hand, rel=0.01)
    assert second.usage["cache_read_tokens"] == 400


def test_a_preview_litellm_has_no_price_for_costs_unknown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """litellm makes up an entry for a Gemini model its price list lacks, priced at 0.0:
    the cost is unknown (null), never a free-looking 0.0."""
    assert GEMINI_MODEL.split("/", 1)[1] not in load_litellm().model_cost
    with Recording() as fake:
        fake.push(Reply(text="Hello."))
        cfg = write_config(tmp_path / "c.toml", GEMINI_MODEL, fake.base_url,
                           api_key="fake-key", server=False)
        result = ok(run(capsys, cfg, "hi"))
    assert result.usage["prompt_tokens"] > 0 and result.usage["cost"] is None


def test_two_calls_in_one_step_go_back_with_the_first_ones_signature(
        gemini: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Gemini signs only the first function call of a step: both calls run, both answers
    go back in one turn, the signature on the first call, accepted."""
    gemini.push(Reply(thoughts="Two sums at once.", function_calls=[
        FunctionCall("t__add", {"a": 1, "b": 2}), FunctionCall("t__add", {"a": 3, "b": 4})]),
        Reply(thoughts="Both back.", text="3 and 7."))
    result = ok(run(capsys, thinking_config(tmp_path, gemini), "add 1+2 and 3+4"))
    assert sorted(r["text"] for r in result.of("tool_result")) == ["3", "7"]
    served_all(gemini)
    step = camel(gemini.requests[1].body)["contents"][1]["parts"]
    assert [("thoughtSignature" in p) for p in step] == [True, False]
    assert len(camel(gemini.requests[1].body)["contents"][2]["parts"]) == 2


@pytest.mark.parametrize(("finish", "reason"), [("MAX_TOKENS", "max_tokens"),
                                                 ("SAFETY", "refusal")])
def test_a_reply_stopped_by_the_limit_or_safety_ends_the_turn_so(
        gemini: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        finish: str, reason: str) -> None:
    """Gemini's ``finishReason`` ``MAX_TOKENS`` and ``SAFETY`` end the turn as ``max_tokens``
    and ``refusal``, the text so far kept, with a note, exit 1."""
    gemini.push(Reply(text="The first half of", finish_reason=finish))
    result = run(capsys, config(tmp_path, gemini, server=False), "a long story")
    assert result.code == 1 and result.done["reason"] == reason, (result.events, result.err)
    assert result.text() == "The first half of" and not result.of("error")
    [notice] = result.of("notice")
    said = {"max_tokens": "output-token limit (the provider's default; set [model] "
                          "max_tokens to raise it)",
            "refusal": "the provider stopped the reply (finish reason content_filter"}
    assert said[reason] in notice["message"], notice
