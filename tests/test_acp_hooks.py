"""Hooks over ACP: a PreToolUse hook's deny refuses the call before the editor is asked
(the server never sees it, the model reads the hook's reason), the session's start and
end fire SessionStart and SessionEnd, what SessionStart says reaches the editor, and the
editor's own question fires no Notification hook."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.hook_kit import guard, hooks_toml, script

pytestmark = pytest.mark.slow


def test_a_pre_tool_use_deny_over_acp(fake_llm: FakeLLM, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    log = tmp_path / "session.log"
    record = script(tmp_path, "session.sh", "#!/bin/bash\nINPUT=$(cat)\n"
                    f"echo \"$INPUT\" | grep -o '\"hook_event_name\": *\"[A-Za-z]*\"' >> {log}\n")
    hooks = hooks_toml("PreToolUse", str(guard(tmp_path)), "mcp__fake__echo") + "".join(
        hooks_toml(event, str(record)) for event in ("SessionStart", "SessionEnd"))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("fake__echo", {"text": "forbidden"},
                                                 id="c1")]), Reply(text="understood"))
    editor = Editor(["allow_once"])
    conf = config(tmp_path, fake_llm, fake_server_toml("fake", "--marks", str(marks)),
                  extra="\n" + hooks)

    async def scenario() -> str:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            return await prompt(conn, sid, "echo")

    assert asyncio.run(scenario()) == "end_turn"
    assert editor.asked == []  # refused before the editor was asked
    assert not (marks / "echo").exists()
    failed = [u for u in editor.of("tool_call_update") if u.status == "failed"]
    assert failed and "Blocked: the input mentions a forbidden word" in \
        failed[0].content[0].content.text
    assert "Blocked: the input mentions a forbidden word" in str(
        fake_llm.requests[1]["messages"][-1]["content"])
    assert [line.split('"')[-2] for line in log.read_text().splitlines()] == [
        "SessionStart", "SessionEnd"]


def test_session_start_notices_reach_the_editor_and_no_notification_fires(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """What a SessionStart hook says to the person (``systemMessage``) reaches the editor
    with the session's first updates, and its ``additionalContext`` the model; the editor
    asks about a call itself, so no ``permission_prompt`` Notification hook fires."""
    told = tmp_path / "told.log"
    start = script(tmp_path, "start.sh", "#!/bin/bash\nINPUT=$(cat)\n"
                   f"echo SessionStart >> {told}\n"
                   "echo '{\"systemMessage\": \"welcome back: 3 tests fail\", "
                   "\"hookSpecificOutput\": {\"hookEventName\": \"SessionStart\", "
                   "\"additionalContext\": \"the branch is main\"}}'\n")
    notify = script(tmp_path, "notify.sh", f"#!/bin/bash\nINPUT=$(cat)\necho Notification >> "
                                           f"{told}\n")
    hooks = hooks_toml("SessionStart", str(start)) + hooks_toml("Notification", str(notify))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("fake__echo", {"text": "hi"}, id="c1")]),
                  Reply(text="said"))
    editor = Editor(["allow_once"])
    conf = config(tmp_path, fake_llm, fake_server_toml("fake"), extra="\n" + hooks)

    async def scenario() -> str:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await editor.until(lambda: "welcome back" in editor.text())
            return await prompt(conn, sid, "echo")

    assert asyncio.run(scenario()) == "end_turn"
    assert "welcome back: 3 tests fail\n" in editor.text()
    # tui-agent's own message, marked as such: neither the model's reply nor its thinking
    notices = [u for u in editor.own() if "welcome back" in u.content.text]
    assert notices and notices[0].field_meta == {"tuiAgent": {"kind": "notice"}}
    assert "welcome back" not in editor.reply() + editor.text("agent_thought_chunk")
    assert len(editor.asked) == 1  # the editor asked about the call
    assert "the branch is main" in json.dumps(fake_llm.requests[0]["messages"])
    assert told.read_text().splitlines() == ["SessionStart"]
