"""Hooks over ACP: a PreToolUse hook's deny refuses the call before the editor is asked
(the server never sees it, the model reads the hook's reason), and the session's start and
end fire SessionStart and SessionEnd."""

from __future__ import annotations

import asyncio
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
