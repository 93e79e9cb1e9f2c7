"""The whole loop through the Ollama fake, driven as a user drives tui-agent: ``tui-agent
run`` with a config file, a real MCP server over stdio, and ``ollama_chat/qwen3`` served
by tests/fakes/ollama_server.py, which refuses a tool call whose arguments are not a JSON
object, refuses ``think`` to a model that cannot think, and (as Ollama does) cuts a prompt
longer than ``num_ctx`` silently, recording each cut.

Plain text with the server's counts and no price (a local model's cost is unknown, never
0.0); a tool round trip with thinking on; resume and another tool turn; automatic
compaction (a small ``context_window``) and a tool turn after it; a refusal in plain words
and a 500 retried; a long conversation sent with ``num_ctx`` equal to the window
``/api/show`` reports, so nothing is cut; a model without the ``thinking`` capability
told and not sent ``think`` (and ``/think``'s word on a model is the server's too); and
two calls in one step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_kit import entry_point, ok, run, tool_round_trip, write_config
from tests.fakes.ollama_server import Model, OllamaFake, Reply, ToolCall
from tests.providers import OLLAMA_MODEL, ollama_fake
from tui_agent.core.llm.facts import can_reason, model_facts

_ = (entry_point, ollama_fake)
pytestmark = pytest.mark.usefixtures("entry_point")

SUMMARY = "SUMMARY: the user asked for sums; the add tool answered each."


def config(tmp_path: Path, fake: OllamaFake, model: str = OLLAMA_MODEL,
           **settings: Any) -> Path:
    return write_config(tmp_path / "c.toml", model, fake.base_url, **settings)


def thinking_config(tmp_path: Path, fake: OllamaFake, **settings: Any) -> Path:
    return config(tmp_path, fake, reasoning_effort="medium", **settings)


def add_turn(a: int, b: int, answer: str) -> list[Reply]:
    """A tool turn: think, call ``t__add``, think again, answer."""
    return [Reply(thinking=f"I should add {a} and {b} with the tool.",
                  tool_calls=[ToolCall("t__add", {"a": a, "b": b})]),
            Reply(thinking=f"The tool said {a + b}.", text=answer)]


def test_plain_text_with_the_servers_counts_and_no_price(
        ollama_fake: OllamaFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ollama_fake.push(Reply(text="Paris is the capital of France."))
    result = ok(run(capsys, config(tmp_path, ollama_fake, server=False), "capital?"))
    assert result.text() == "Paris is the capital of France."
    assert result.kinds() == ["session", *["text"] * 4, "done"]
    body = ollama_fake.chats[0]
    assert "think" not in body  # no reasoning_effort: no thinking asked for
    prompt = len(json.dumps([body.get("messages"), body.get("tools")], sort_keys=True,
                            separators=(",", ":"))) // 4
    usage = result.usage
    assert usage["prompt_tokens"] == prompt
    assert usage["completion_tokens"] == len("Paris is the capital of France.") // 4
    assert usage["cost"] is None


def test_a_tool_turn_with_thinking_then_resumed_with_another(
        ollama_fake: OllamaFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``think`` goes with every request; the tool call goes back with its arguments as an
    object (a string is Ollama's unmarshal error); the resumed run sends both turns' calls
    that way too and its own tool turn is accepted."""
    cfg = thinking_config(tmp_path, ollama_fake)
    ollama_fake.push(*add_turn(2, 3, "2 + 3 = 5."))
    first = ok(run(capsys, cfg, "add 2 and 3"))
    tool_round_trip(first, answer="5")
    assert first.reasoning() == "I should add 2 and 3 with the tool.The tool said 5."
    assert first.text() == "2 + 3 = 5."
    assert first.usage["cost"] is None

    ollama_fake.push(*add_turn(5, 6, "5 + 6 = 11."))
    resumed = ok(run(capsys, cfg, "now add 5 and 6", "--resume", first.session))
    tool_round_trip(resumed, answer="11")
    assert ollama_fake.pending() == 0 and len(ollama_fake.chats) == 4
    assert all(chat["think"] is True for chat in ollama_fake.chats)
    sent = [c["function"]["arguments"] for m in ollama_fake.chats[-1]["messages"]
            for c in m.get("tool_calls") or []]
    assert sent == [{"a": 2, "b": 3}, {"a": 5, "b": 6}]


def test_compaction_then_a_tool_turn(ollama_fake: OllamaFake, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A small ``context_window``: the third tool turn starts past the compaction point,
    the earlier turns become a summary (one request), and the tool turn after it is
    accepted, sent with ``num_ctx`` equal to that window."""
    cfg = thinking_config(tmp_path, ollama_fake, context_window=1400)
    note = "note " * 250
    ollama_fake.push(*add_turn(1, 1, "1 + 1 = 2."), *add_turn(2, 3, "2 + 3 = 5."))
    first = ok(run(capsys, cfg, f"add 1 and 1; {note}"))
    ok(run(capsys, cfg, f"add 2 and 3; {note}", "--resume", first.session))
    ollama_fake.push(Reply(thinking="Summarize.", text=SUMMARY), *add_turn(4, 4, "4 + 4 = 8."))
    third = ok(run(capsys, cfg, f"add 4 and 4; {note}", "--resume", first.session))
    [compaction] = third.of("compaction")
    assert compaction["reason"] == "auto" and compaction["summary"] == SUMMARY
    tool_round_trip(third, answer="8")
    assert ollama_fake.pending() == 0
    last = ollama_fake.chats[-1]
    first_said = next(m for m in last["messages"] if m["role"] != "system")
    assert SUMMARY in first_said["content"] and "add 1 and 1" not in str(last)
    assert all(chat["options"]["num_ctx"] == 1400 for chat in ollama_fake.chats)
    assert not ollama_fake.truncations


def test_a_refusal_reads_in_plain_words_and_a_500_is_retried(
        ollama_fake: OllamaFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = config(tmp_path, ollama_fake, server=False, max_retries=1)
    ollama_fake.push(Reply(status=500, error_message="llama runner process has terminated"),
                     Reply(text="Back again."))
    retried = ok(run(capsys, cfg, "hello"))
    [retry] = retried.of("retry")
    assert "llama runner process has terminated" in retry["reason"]
    assert retried.text() == "Back again."

    missing = run(capsys, config(tmp_path, ollama_fake, "ollama_chat/llama9", server=False),
                  "hello")
    assert missing.code == 2  # a model the server does not have: the config's to fix
    [failure] = missing.of("error")
    message = failure["message"]
    assert 'model "llama9" not found, try pulling it first' in message
    assert "b'" not in message and '{"error"' not in message


def test_num_ctx_is_the_window_the_server_reports_and_nothing_is_cut(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No ``context_window`` in the config: the window is asked of the server
    (``/api/show``), every request sends it as ``num_ctx``, and a conversation past
    Ollama's own default of 4096 tokens reaches the model whole."""
    with OllamaFake(models={"qwen3": Model(context_length=32768)}) as fake:
        cfg = config(tmp_path, fake, server=False)
        fake.push(Reply(text="Noted one."), Reply(text="Noted two."))
        first = ok(run(capsys, cfg, "remember this: " + "one " * 4000))
        second = ok(run(capsys, cfg, "and this: " + "two " * 4000, "--resume",
                        first.session))
    assert [chat["options"]["num_ctx"] for chat in fake.chats] == [32768, 32768]
    assert not fake.truncations
    assert second.done["context"]["window"] == 32768
    assert second.usage["prompt_tokens"] > 4096 and second.usage["cost"] is None


def test_a_model_that_cannot_think_is_told_not_sent_think(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The server's capabilities decide: a model without ``thinking`` gets a note and no
    ``think`` (which Ollama refuses with 400), and the turn goes on."""
    plain = Model(capabilities=("completion", "tools"), architecture="gemma3")
    with OllamaFake(models={"gemma3": plain}) as fake:
        fake.push(Reply(text="Hello."))
        result = ok(run(capsys, config(tmp_path, fake, "ollama_chat/gemma3", server=False,
                                       reasoning_effort="high"), "hi"))
    assert result.text() == "Hello."
    [note] = result.of("notice")
    assert note["message"] == ('ollama_chat/gemma3 does not reason: reasoning_effort = '
                               '"high" is not sent')
    assert "think" not in fake.chats[0]


def test_two_calls_in_one_step(ollama_fake: OllamaFake, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """Ollama sends calls without ids (litellm makes them up): two in one step both run
    and go back, each answered by its own result, arguments as objects."""
    ollama_fake.push(Reply(thinking="Two sums at once.", tool_calls=[
        ToolCall("t__add", {"a": 1, "b": 2}), ToolCall("t__add", {"a": 3, "b": 4})]),
        Reply(text="3 and 7."))
    result = ok(run(capsys, thinking_config(tmp_path, ollama_fake), "add 1+2 and 3+4"))
    assert sorted(r["text"] for r in result.of("tool_result")) == ["3", "7"]
    sent = [m for m in ollama_fake.chats[1]["messages"] if m["role"] != "system"]
    assert [c["function"]["arguments"] for c in sent[1]["tool_calls"]] == [
        {"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert [m["content"] for m in sent[2:]] == ["3", "7"]


def test_think_asks_the_server_whether_the_model_reasons() -> None:
    """What ``/think`` tells of an Ollama model (``can_reason``) is the server's word, as
    the requests follow it: qwen3 thinks, gemma3 does not, a server that does not answer
    leaves it unknown."""
    plain = Model(capabilities=("completion", "tools"), architecture="gemma3")
    with OllamaFake(models={"qwen3": Model(), "gemma3": plain}) as fake:
        assert can_reason("ollama_chat/qwen3", fake.base_url) is True
        assert can_reason("ollama/gemma3", fake.base_url) is False
        gone = fake.base_url
    assert can_reason("ollama_chat/qwen3", gone) is None


def test_the_model_pickers_facts_on_an_ollama_model_are_the_servers() -> None:
    """The ``/model`` picker's line for an Ollama model comes from the server, as the
    requests do: its window and whether it thinks, and no price."""
    plain = Model(capabilities=("completion", "tools"), architecture="gemma3",
                  context_length=8192)
    with OllamaFake(models={"qwen3": Model(context_length=32768), "gemma3": plain}) as fake:
        thinks = model_facts("ollama_chat/qwen3", fake.base_url)
        does_not = model_facts("ollama/gemma3", fake.base_url)
        gone = fake.base_url
    assert thinks is not None and does_not is not None
    assert thinks.summary() == "32k window · reasons"
    assert does_not.summary() == "8192 window"
    assert model_facts("ollama_chat/qwen3", gone) is None
