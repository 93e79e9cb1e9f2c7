"""The whole loop through the Anthropic Messages fake, driven as a user drives tui-agent:
``tui-agent run`` (the command line's entry point) with a config file, a real MCP server
over stdio, and ``anthropic/claude-sonnet-4-5`` served by tests/fakes/anthropic_server.py,
which checks every thinking block's signature and caches prompts as Anthropic does.

Plain text with the provider's counts; the command in its own process (thinking on
stderr only); a tool round trip with thinking on (the signed block goes back and is
verified, a redacted one byte for byte); resume of a conversation that ended in thinking
blocks and another tool turn; ``--compact`` of such a conversation and a tool turn after
it; a long tool turn compacted midway; 529 retried, a refusal in plain words, "prompt is
too long" driving a compaction; prompt caching from the second request on (none with
``prompt_cache = false``) at the list price computed here by hand; and one tool turn in
the app with its thinking blocks shown.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.e2e_kit import entry_point, ok, run, tool_round_trip, write_config
from tests.fakes.anthropic_server import (
    AnthropicFake,
    Reply,
    ToolUse,
    canonical,
    error,
    prompt_blocks,
)
from tests.providers import ANTHROPIC_MODEL, anthropic_fake
from tests.ui.kit import finish, make_app, ready
from tests.ui.kit import turn as ui_turn
from tests.zygote import TUI_AGENT
from tui_agent.core.llm import load_litellm
from tui_agent.ui.widgets.messages import AssistantMessage
from tui_agent.ui.widgets.thinking import ThinkingBlock

_ = (entry_point, anthropic_fake)
pytestmark = pytest.mark.usefixtures("entry_point")

SUMMARY = "SUMMARY: the user asked for sums; 2 + 3 = 5 came from the add tool."


def config(tmp_path: Path, fake: AnthropicFake, **settings: Any) -> Path:
    return write_config(tmp_path / "c.toml", ANTHROPIC_MODEL, fake.base_url,
                        api_key="sk-fake", **settings)


def thinking_config(tmp_path: Path, fake: AnthropicFake, **settings: Any) -> Path:
    return config(tmp_path, fake, reasoning_effort="medium", **settings)


def add_turn(a: int, b: int, answer: str) -> list[Reply]:
    """A tool turn: think, call ``t__add``, think again, answer."""
    return [Reply(thinking=f"I should add {a} and {b} with the tool.",
                  tool_uses=[ToolUse("t__add", {"a": a, "b": b})]),
            Reply(thinking=f"The tool said {a + b}.", text=answer)]


def served_all(fake: AnthropicFake) -> None:
    """The fake answered every request it got: none broke a rule (a dropped or altered
    thinking block is a 400 that ends the turn with an error)."""
    assert len(fake.usages) == len(fake.requests), [r.body for r in fake.requests]


def signed_blocks(body: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The thinking blocks in a request's history, with their message's index."""
    return [(i, b) for i, m in enumerate(body["messages"]) if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "thinking"]


def test_plain_text_with_the_providers_counts(anthropic_fake: AnthropicFake, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    anthropic_fake.push(Reply(text="Paris is the capital of France.", output_tokens=9))
    result = ok(run(capsys, config(tmp_path, anthropic_fake, server=False), "capital?"))
    assert result.text() == "Paris is the capital of France."
    assert result.kinds() == ["session", *["text"] * 4, "done"]
    reported = anthropic_fake.usages[0]
    usage = result.usage
    assert usage["prompt_tokens"] == reported["input_tokens"] + \
        reported["cache_creation_input_tokens"] + reported["cache_read_input_tokens"]
    assert usage["completion_tokens"] == 9 and usage["reasoning_tokens"] == 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + 9
    sent = anthropic_fake.requests[0].body
    assert "thinking" not in sent  # no reasoning_effort: no thinking asked for


def test_the_command_in_its_own_process_shows_thinking_on_stderr_only(
        anthropic_fake: AnthropicFake, tmp_path: Path) -> None:
    """``python -m tui_agent run --show-reasoning`` as a user types it: the reply alone on
    stdout, the thinking on stderr after its label, exit 0."""
    anthropic_fake.push(Reply(thinking="The user wants a capital.", text="Paris."))
    cfg = thinking_config(tmp_path, anthropic_fake, server=False)
    done = subprocess.run([*TUI_AGENT, "run", "--config", str(cfg),
                           "--show-reasoning", "capital of France?"], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (done.returncode, done.stdout) == (0, "Paris.\n"), done.stderr
    assert "thinking: The user wants a capital.\n" in done.stderr
    assert anthropic_fake.requests[0].body["thinking"]["type"] == "enabled"


def test_a_tool_turn_with_thinking_then_resumed_with_another(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The reply that calls the tool goes back with its thinking block first, joined and
    signed (the fake verifies the signature), and its redacted block byte for byte; the
    session file keeps both, so a resumed run continues with another tool turn that the
    fake accepts too."""
    cfg = thinking_config(tmp_path, anthropic_fake)
    calls, answer = add_turn(2, 3, "2 + 3 = 5.")
    calls.redacted = True
    anthropic_fake.push(calls, answer)
    first = ok(run(capsys, cfg, "add 2 and 3"))
    tool_round_trip(first, answer="5")
    assert first.reasoning() == "I should add 2 and 3 with the tool.The tool said 5."
    assert first.text() == "2 + 3 = 5."
    served_all(anthropic_fake)
    sent = anthropic_fake.requests[0].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    again = anthropic_fake.requests[1].body
    [(at, block)] = signed_blocks(again)
    assert again["messages"][at]["content"][0] is block  # first, before the tool_use
    assert block["thinking"] == "I should add 2 and 3 with the tool."
    assert anthropic_fake.verify(block["thinking"], block["signature"])
    kept = [m for m in first.conversation().messages if m["role"] == "assistant"]
    assert [[b["type"] for b in m.get("thinking_blocks", [])] for m in kept] == [
        ["thinking", "redacted_thinking"], ["thinking"]]

    anthropic_fake.push(*add_turn(5, 6, "5 + 6 = 11."))
    resumed = ok(run(capsys, cfg, "now add 5 and 6", "--resume", first.session))
    assert resumed.of("session")[0]["resumed"] is True
    tool_round_trip(resumed, answer="11")
    served_all(anthropic_fake)
    last = anthropic_fake.requests[-1].body
    thoughts = [b["thinking"] for _, b in signed_blocks(last)]
    assert thoughts == ["I should add 2 and 3 with the tool.", "The tool said 5.",
                        "I should add 5 and 6 with the tool."]
    assert all(anthropic_fake.verify(b["thinking"], b["signature"])
               for _, b in signed_blocks(last))
    assert "redacted_thinking" in str(last["messages"][1]["content"])  # opaque, kept


def test_compact_a_thinking_conversation_then_a_tool_turn(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``run --resume --compact PROMPT``: the earlier turns become a summary (one request),
    the latest turn is kept with its signed thinking, and the tool turn after it is
    accepted."""
    cfg = thinking_config(tmp_path, anthropic_fake)
    anthropic_fake.push(*add_turn(1, 1, "1 + 1 = 2."))
    first = ok(run(capsys, cfg, "add 1 and 1"))
    anthropic_fake.push(*add_turn(2, 3, "2 + 3 = 5."))
    ok(run(capsys, cfg, "add 2 and 3", "--resume", first.session))
    anthropic_fake.push(Reply(thinking="Summarize briefly.", text=SUMMARY),
                        *add_turn(4, 4, "4 + 4 = 8."))
    compacted = ok(run(capsys, cfg, "add 4 and 4", "--resume", first.session, "--compact"))
    [compaction] = compacted.of("compaction")
    assert compaction["reason"] == "manual" and compaction["summary"] == SUMMARY
    assert compaction["replaced"] == 4 and compaction["kept"] == 4
    tool_round_trip(compacted, answer="8")
    served_all(anthropic_fake)
    last = anthropic_fake.requests[-1].body
    assert SUMMARY in str(last["messages"][0]["content"])
    assert "add 1 and 1" not in str(last["messages"])  # summarized away
    thoughts = [b["thinking"] for _, b in signed_blocks(last)]
    assert thoughts == ["I should add 2 and 3 with the tool.", "The tool said 5.",
                        "I should add 4 and 4 with the tool."]
    conversation = compacted.conversation()
    assert conversation.compaction is not None and conversation.compaction.summary == SUMMARY
    assert len(conversation.messages) == 12  # every message stays on disk


def test_a_long_tool_turn_compacts_midway_and_keeps_its_signed_thinking(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A small ``context_window`` and one turn of six tool calls: past the compaction point
    the earlier rounds become a summary in the middle of the turn, and the rounds after it
    go on with the latest tool call's signed thinking block first, accepted."""
    cfg = thinking_config(tmp_path, anthropic_fake, context_window=2250)
    # The rounds are sized for this tool set: the agent tool would shift where it compacts.
    cfg.write_text(cfg.read_text() + "\n[agents]\nmax_depth = 0\n")
    rounds = [Reply(thinking=f"Echo round {i}.", tool_uses=[ToolUse(
        "t__echo", {"text": f"{i} " + "word " * 150})]) for i in range(6)]
    anthropic_fake.push(*rounds[:4], Reply(text=SUMMARY), *rounds[4:],
                        Reply(thinking="All six came back.", text="Echoed six times."))
    result = ok(run(capsys, cfg, "echo six times"))
    [compaction] = result.of("compaction")
    assert compaction["reason"] == "auto" and compaction["summary"] == SUMMARY
    kinds = result.kinds()
    assert 0 < kinds.index("compaction") < len(kinds) - 1 - kinds[::-1].index("tool_call")
    assert len(result.of("tool_result")) == 6 and result.text() == "Echoed six times."
    served_all(anthropic_fake)
    last = anthropic_fake.requests[-1].body
    assert SUMMARY in str(last["messages"][0]["content"])
    assert "echo six times" not in str(last["messages"])  # the turn's start is summarized
    assert [b["thinking"] for _, b in signed_blocks(last)][-1] == "Echo round 5."
    assert all(m["content"][0]["type"] == "thinking" for m in last["messages"]
               if m["role"] == "assistant")


def test_overloaded_is_retried_and_a_refusal_reads_in_plain_words(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    cfg = config(tmp_path, anthropic_fake, server=False, max_retries=2)
    anthropic_fake.push(error(529), Reply(text="Back again."))
    retried = ok(run(capsys, cfg, "hello"))
    [retry] = retried.of("retry")
    assert "overloaded" in retry["reason"].lower() and "b'" not in retry["reason"]
    assert retried.text() == "Back again." and len(anthropic_fake.requests) == 2

    anthropic_fake.push(error(529), error(529), error(529))
    refused = run(capsys, cfg, "hello again", "--resume", retried.session)
    assert refused.code == 1 and len(refused.of("retry")) == 2
    [failure] = refused.of("error")
    message = failure["message"]
    assert "overloaded" in message.lower() and "Overloaded" in message
    assert "b'" not in message and '{"type"' not in message and "\\n" not in message


def test_prompt_too_long_compacts_and_the_request_goes_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Anthropic's "prompt is too long: N tokens > M maximum" (the model's own window is far
    bigger, so nothing is compacted before): the earlier turns are summarized and the same
    request goes again, accepted."""
    with AnthropicFake(window=1500) as fake:
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
    sizes = [len(canonical(prompt_blocks(r.body))) // 4 for r in fake.requests]
    # two turns served; the third refused as too long; the summary; the third again
    assert [s > 1500 for s in sizes] == [False, False, True, False, False], sizes
    assert len(fake.usages) == 4
    assert SUMMARY in str(fake.requests[-1].body["messages"][0]["content"])
    assert "three " * 300 in str(fake.requests[-1].body["messages"][-1]["content"])


def by_hand(reported: dict[str, int]) -> float:
    """One request's list price from litellm's price entry and the fake's own counts."""
    price = load_litellm().model_cost["claude-sonnet-4-5"]
    return float(
        reported["input_tokens"] * price["input_cost_per_token"]
        + reported["cache_creation_input_tokens"] * price["cache_creation_input_token_cost"]
        + reported["cache_read_input_tokens"] * price["cache_read_input_token_cost"]
        + reported["output_tokens"] * price["output_cost_per_token"])


SYSTEM = "You are a careful assistant who checks every sum with the tool. " * 80
"""About 1,300 tokens: past the 1,024 Anthropic caches at the least."""


@pytest.mark.parametrize("cache", [True, False])
def test_caching_from_the_second_request_on_at_the_list_price(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], cache: bool) -> None:
    """With the default config every request after the first reads the one before it from
    the cache (a tool turn, then a resumed turn); ``prompt_cache = false`` marks nothing
    and reads nothing. Each turn's cost is the list price of the fake's counts."""
    settings: dict[str, Any] = {"system_prompt": SYSTEM, "reasoning_effort": "low"}
    if not cache:
        settings["prompt_cache"] = False
    with AnthropicFake() as fake:
        cfg = config(tmp_path, fake, **settings)
        fake.push(*add_turn(2, 3, "2 + 3 = 5."), Reply(thinking="Easy.", text="Yes, 5."))
        first = ok(run(capsys, cfg, "add 2 and 3"))
        second = ok(run(capsys, cfg, "sure?", "--resume", first.session))
    served_all(fake)
    reads = [u["cache_read_input_tokens"] for u in fake.usages]
    marked = ["cache_control" in str(r.body) for r in fake.requests]
    if cache:
        assert reads[0] == 0 and all(r > 1000 for r in reads[1:]), reads
        assert all(marked)
    else:
        assert reads == [0, 0, 0] and not any(marked)
        assert all(u["cache_creation_input_tokens"] == 0 for u in fake.usages)
    for result, served in ((first, fake.usages[:2]), (second, fake.usages[2:])):
        usage = result.usage
        assert usage["cache_read_tokens"] == sum(u["cache_read_input_tokens"] for u in served)
        assert usage["cache_write_tokens"] == sum(u["cache_creation_input_tokens"]
                                                  for u in served)
        assert usage["prompt_tokens"] == sum(u["input_tokens"] + u["cache_read_input_tokens"]
                                             + u["cache_creation_input_tokens"] for u in served)
        assert usage["cost"] == pytest.approx(sum(by_hand(u) for u in served), rel=0.01)


@pytest.mark.anyio
async def test_a_tool_turn_in_the_app_shows_its_thinking(anthropic_fake: AnthropicFake,
                                                         tmp_path: Path) -> None:
    """The app, on the same config: the thinking of both requests shows in folded blocks
    above the reply (how long it took), the signed block goes back with the tool result
    and the fake accepts it."""
    cfg = thinking_config(tmp_path, anthropic_fake, auto=True)
    anthropic_fake.push(*add_turn(2, 3, "The sum is **5**."))
    app = make_app(cfg)
    async with app.run_test(size=(100, 32)) as pilot:
        await ready(pilot, app)
        await ui_turn(pilot, app, "add 2 and 3")
        await pilot.pause()
        blocks = list(app.transcript.query(ThinkingBlock))
        reply = app.transcript.query_one(AssistantMessage)
        assert [b.text for b in blocks] == ["I should add 2 and 3 with the tool.",
                                            "The tool said 5."]
        assert all(b.render().plain.startswith("∴ Thought for ") for b in blocks)
        children = list(app.transcript.children)
        assert children.index(blocks[-1]) < children.index(reply)
        assert reply.source == "The sum is **5**."
        await finish(app)
    served_all(anthropic_fake)
    [(_, block)] = signed_blocks(anthropic_fake.requests[1].body)
    assert anthropic_fake.verify(block["thinking"], block["signature"])


@pytest.mark.parametrize(("stop_reason", "reason", "said"), [
    ("max_tokens", "max_tokens", "output-token limit ([model] max_tokens = 64)"),
    ("refusal", "refusal", "the provider stopped the reply")])
def test_a_reply_stopped_by_the_limit_or_a_refusal_ends_the_turn_so(
        anthropic_fake: AnthropicFake, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        stop_reason: str, reason: str, said: str) -> None:
    """Anthropic's ``stop_reason`` ``max_tokens`` and ``refusal`` (litellm maps them to
    ``length`` and ``content_filter``) end the turn as ``max_tokens`` and ``refusal``: the
    text so far kept, a note saying why, exit 1 (the answer is not whole)."""
    anthropic_fake.push(Reply(text="The first half of", stop_reason=stop_reason))
    result = run(capsys, config(tmp_path, anthropic_fake, server=False, max_tokens=64),
                 "a long story")
    assert result.code == 1 and result.done["reason"] == reason, (result.events, result.err)
    assert result.text() == "The first half of" and not result.of("error")
    [notice] = result.of("notice")
    assert said in notice["message"], notice
    assert anthropic_fake.requests[-1].body["max_tokens"] == 64


def test_a_tool_call_in_a_reply_cut_by_the_limit_is_not_run_and_the_pairing_holds(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A reply stopped at ``max_tokens`` while it asked for a tool: the call (its
    arguments may be cut) is not run but answered as refused, so the conversation resumes
    with every ``tool_use`` paired with its ``tool_result``, as Anthropic requires."""
    anthropic_fake.push(Reply(text="Adding.", tool_uses=[ToolUse("t__add", {"a": 2, "b": 3})],
                              stop_reason="max_tokens"))
    cfg = config(tmp_path, anthropic_fake)
    cut = run(capsys, cfg, "add 2 and 3")
    assert cut.code == 1 and cut.done["reason"] == "max_tokens", (cut.events, cut.err)
    [result] = cut.of("tool_result")
    assert result["is_error"] and result["text"].startswith("not run: the reply was stopped")
    assert len(anthropic_fake.requests) == 1  # the turn ended there
    anthropic_fake.push(Reply(text="Going on: 5."))
    ok(run(capsys, cfg, "go on", "--resume", cut.session))
    served_all(anthropic_fake)
