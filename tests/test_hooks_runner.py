"""The hook runner with real scripts: Claude Code's input on stdin and environment, exit 0
JSON and text, exit 2 as a block, deny over ask over allow, hooks in parallel, and the bad
ones (hangs, crashes, floods, invalid JSON, not executable) each named in a warning while
the call goes on."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from tests.hook_kit import decider, guard, script, seen
from tui_agent.core.hooks import Hooks, SessionFacts
from tui_agent.core.hooks.answers import HookResult
from tui_agent.custom.hooks import HookCommand, HookConfig, HookGroup

FACTS = SessionFacts(lambda: "s-1", lambda: "/tmp/s-1.jsonl", lambda: "auto")


def hooks(tmp_path: Path, *commands: str, event: str = "PreToolUse",
          timeout: float = 60) -> Hooks:
    group = HookGroup(event, "", tuple(HookCommand(c, timeout) for c in commands))
    return Hooks(HookConfig((group,)), cwd=tmp_path, project_dir=tmp_path / "proj")


def fire(runner: Hooks, event: str = "PreToolUse", **fields: object) -> HookResult:
    base = {"tool_name": "mcp__fs__write", "tool_input": {"path": "a"}, "tool_use_id": "c1"}
    return asyncio.run(runner.fire(event, FACTS, {**base, **fields}))


def test_a_shell_guard_gets_claude_codes_input_and_exit_2_blocks(tmp_path: Path) -> None:
    runner = hooks(tmp_path, str(guard(tmp_path)))
    assert fire(runner).decision == ""
    (got,) = seen(tmp_path)
    assert got == {"session_id": "s-1", "transcript_path": "/tmp/s-1.jsonl",
                   "cwd": str(tmp_path), "permission_mode": "bypassPermissions",
                   "hook_event_name": "PreToolUse", "tool_name": "mcp__fs__write",
                   "tool_input": {"path": "a"}, "tool_use_id": "c1"}
    blocked = fire(runner, tool_input={"path": "forbidden"})
    assert (blocked.decision, blocked.blocked) == ("deny", True)
    assert blocked.reason == "Blocked: the input mentions a forbidden word"
    assert blocked.by == f"hook: {tmp_path / 'guard.sh'}"


def test_the_environment_and_folder_are_claude_codes(tmp_path: Path) -> None:
    runner = hooks(tmp_path, 'echo "{\\"systemMessage\\": \\"$CLAUDE_PROJECT_DIR '
                   '$TUI_AGENT_PROJECT_DIR $(pwd)\\"}"')
    (note,) = fire(runner).notes()
    assert note == f"{tmp_path / 'proj'} {tmp_path / 'proj'} {tmp_path}"


def test_deny_beats_ask_beats_allow_and_updated_input_comes_with_it(tmp_path: Path) -> None:
    allow = decider(tmp_path, "allow", "fine", "a.py", updated={"path": "b"})
    ask = decider(tmp_path, "ask", "have a look", "b.py")
    deny = decider(tmp_path, "deny", "never", "c.py")
    asked = fire(hooks(tmp_path, f"python3 {allow}", f"python3 {ask}"))
    assert (asked.decision, asked.reason, asked.by) == ("ask", "have a look",
                                                        f"hook: python3 {ask}")
    assert asked.updated_input == {"path": "b"}
    denied = fire(hooks(tmp_path, str(allow), str(ask), str(deny)))
    assert (denied.decision, denied.reason) == ("deny", "never")
    allowed = fire(hooks(tmp_path, str(allow)))
    assert (allowed.decision, allowed.updated_input) == ("allow", {"path": "b"})


def test_json_fields_and_plain_text_context(tmp_path: Path) -> None:
    said = {"continue": False, "stopReason": "enough", "systemMessage": "\x1b[31mred\x1b[0m",
            "decision": "block", "reason": "fix the tests",
            "hookSpecificOutput": {"additionalContext": "ctx"}}
    runner = hooks(tmp_path, f"echo '{json.dumps(said)}'", event="Stop")
    got = fire(runner, "Stop", stop_hook_active=False)
    assert got.blocked and got.reason == "fix the tests" and got.context == "ctx"
    stopped = got.stopped
    assert stopped is not None and stopped.stop_reason == "enough"
    assert got.notes() == ["red"]  # cleaned of the escape sequence
    text = hooks(tmp_path, "echo 'the branch is main'", event="UserPromptSubmit")
    assert fire(text, "UserPromptSubmit", prompt="hi").context == "the branch is main"
    assert fire(hooks(tmp_path, "echo 'ignored'")).context == ""  # not context here


def test_hooks_of_one_event_run_in_parallel(tmp_path: Path) -> None:
    started = time.monotonic()
    fire(hooks(tmp_path, "sleep 1", "sleep 1 ", "sleep 1  "))
    assert time.monotonic() - started < 2.5


def test_a_hanging_hook_is_killed_with_its_group_at_its_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    runner = hooks(tmp_path, f"sleep 600 & echo $! > {pids}; sleep 600", timeout=1)
    started = time.monotonic()
    got = fire(runner)
    assert time.monotonic() - started < 10
    assert got.decision == "" and len(got.notes()) == 1
    assert "timed out after 1 s (killed)" in got.notes()[0]
    assert "sleep 600" in got.notes()[0]
    child = int(pids.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)  # the background child went with the group


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


@pytest.mark.parametrize(("command", "words"), [
    ("echo boom >&2; exit 3", "exited with status 3: boom"),
    ("kill -SEGV $$", "was killed by signal 11"),
    ("echo '{\"hookSpecificOutput\": '", "printed output that is not valid JSON"),
    ("NOTEXEC", "exited with status 126"),
    ("/no/such/hook.sh", "exited with status 127"),
])
def test_a_broken_hook_is_a_warning_naming_it_and_the_call_goes_on(
        tmp_path: Path, command: str, words: str) -> None:
    if command == "NOTEXEC":
        command = str(tmp_path / "hook.sh")
        Path(command).write_text("#!/bin/sh\nexit 0\n")  # not executable
    got = fire(hooks(tmp_path, command))
    assert got.decision == "" and not got.blocked
    (note,) = got.notes()
    assert note.startswith("hook `") and words in note and command[:20] in note


def test_a_hook_printing_100_mb_neither_hangs_nor_keeps_it(tmp_path: Path) -> None:
    flood = script(tmp_path, "flood.sh", "#!/bin/sh\ncat > /dev/null\n"
                   "head -c 104857600 /dev/zero | tr '\\0' 'x'\n"
                   "head -c 104857600 /dev/zero | tr '\\0' 'y' >&2\nexit 2\n")
    started = time.monotonic()
    got = fire(hooks(tmp_path, str(flood), timeout=60))
    assert time.monotonic() - started < 40
    assert got.blocked and len(got.reason) <= 10_010  # the reason is cut, the rest dropped


def test_the_end_of_a_session_does_not_hang_on_a_session_end_hook(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.core.agent import hooked
    from tui_agent.core.permissions import Policy

    class Ending(hooked.Hooked):
        def __init__(self, hooks: Hooks) -> None:
            self.hooks, self.policy, self.session = hooks, Policy(), None
            self.conversation_id, self.halted, self._background = "s", None, set()

    monkeypatch.setattr(hooked, "SESSION_END_WAIT", 1.0)
    ending = Ending(hooks(tmp_path, "sleep 600", event="SessionEnd", timeout=600))
    started = time.monotonic()
    (note,) = asyncio.run(ending.session_end("other"))
    assert time.monotonic() - started < 10
    assert getattr(note, "message", "") == "SessionEnd hooks still running after 1 s were stopped"


def test_updated_input_is_taken_only_with_an_allow_or_an_ask() -> None:
    """As Claude Code honours ``updatedInput``: from a hook that allows or asks; a hook's
    deny (or exit 2) keeps every hook's rewrite from being used."""
    from tui_agent.core.hooks.answers import HookAnswer

    new = {"path": "/safe"}
    assert HookResult((HookAnswer("a", "allow", updated_input=new),)).updated_input == new
    assert HookResult((HookAnswer("a", "", updated_input=new),)).updated_input is None
    assert HookResult((HookAnswer("a", "allow", updated_input=new),
                       HookAnswer("b", "deny"))).updated_input is None
    assert HookResult((HookAnswer("a", "ask", updated_input=new),
                       HookAnswer("b", block=True))).updated_input is None
