"""The permission modes as the policy applies them to each call: plan refuses what does
not only read (without asking), auto runs what would ask, and what asks outright (the
server's own demand, an ask list) still asks."""

from __future__ import annotations

import json
from typing import Any

from tui_agent.core.permissions import Policy, ServerRules
from tui_agent.core.permissions.modes import (
    PLAN_PROMPT,
    PLAN_REFUSAL,
    next_mode,
    parse_mode,
    plan_of,
    with_mode_note,
    without_mode_note,
)


def test_plan_mode_refuses_a_tool_that_does_not_only_read() -> None:
    policy = Policy({"fs": ServerRules(auto=("write_file",))}, mode="plan")
    judged = policy.judge("fs", "write_file", "fp1")
    assert (judged.verdict, judged.why, judged.by) == ("deny", PLAN_REFUSAL, "plan mode")


def test_plan_mode_runs_what_the_server_or_the_user_marks_read_only() -> None:
    policy = Policy({"fs": ServerRules(auto=("read_file", "list"))}, mode="plan",
                    read_only=("mcp__fs__list",))
    assert policy.judge("fs", "read_file", hints=("read-only",)).verdict == "auto"
    assert policy.judge("fs", "list").verdict == "auto"
    asked = policy.judge("fs", "search", hints=("read-only",))
    assert asked.verdict == "ask"  # read-only, but not allowed: the person still decides


def test_auto_mode_runs_what_would_ask_but_not_what_asks_outright() -> None:
    policy = Policy({"fs": ServerRules(ask=("delete_*",), deny=("format",))}, mode="auto")
    ran = policy.judge("fs", "write_file", "fp1")
    assert (ran.verdict, ran.by) == ("auto", "auto mode")
    assert policy.judge("fs", "delete_all").verdict == "ask"
    assert policy.judge("fs", "delete_all").by == "the ask list of fs"
    assert policy.judge("fs", "format").verdict == "deny"
    firm = policy.judge("local", "shell", asks="commands run unsandboxed")
    assert firm.verdict == "ask" and firm.firm


def test_the_default_mode_asks_and_says_what_allowed_a_listed_tool() -> None:
    policy = Policy({"fs": ServerRules(auto=("read_*",))})
    assert policy.judge("fs", "write_file").verdict == "ask"
    assert policy.judge("fs", "write_file").by == ""  # nothing but a missing allowance
    assert policy.judge("fs", "read_file").by == "the auto list of fs"


def test_shift_tab_cycles_the_three_modes_and_words_parse() -> None:
    assert [next_mode("default"), next_mode("plan"), next_mode("auto")] == \
        ["plan", "auto", "default"]
    assert parse_mode(" Plan ") == "plan" and parse_mode("bypass") is None


def test_plan_mode_tells_the_model_with_the_message() -> None:
    """The note travels with the user's message (the system prompt, the cached part, is
    the same in every mode); what the person sees of the message is without it."""
    noted_text = with_mode_note("hi", "plan")
    assert isinstance(noted_text, str) and noted_text.startswith("hi\n\n<system-reminder>")
    assert without_mode_note(noted_text) == "hi"
    parts = with_mode_note([{"type": "text", "text": "hi"}], "plan")
    assert isinstance(parts, list) and PLAN_PROMPT in json.dumps(parts[-1])
    assert with_mode_note("hi", "auto") == "hi"


def test_the_plan_is_the_last_reply_with_words_of_the_last_turn() -> None:
    messages: list[dict[str, Any]] = [
                {"role": "user", "content": "plan it"},
                {"role": "assistant", "content": "1. read\n2. write", "tool_calls": []},
                {"role": "assistant", "content": ""}]
    assert plan_of(messages) == "1. read\n2. write"
    assert plan_of([*messages, {"role": "user", "content": "and?"}]) is None


def test_the_command_line_offers_the_same_modes() -> None:
    """``--mode``'s choices are spelled in the command line (which imports no core module
    before it needs one): the same words, in the same order."""
    from tui_agent.cli.flags import MODES as FLAG_MODES
    from tui_agent.core.permissions.modes import MODES

    assert FLAG_MODES == MODES
