"""Skills over ACP (a real ``tui-agent acp`` process, the ACP SDK's client side, the
scripted model): the model loads a user skill through the built-in ``skill`` tool, which
the editor is shown as a tool call of kind ``read`` that completes with the body."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, prompt, running
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.skill_kit import pdf_skill, user_skills

pytestmark = pytest.mark.slow


def test_a_skill_call_is_a_read_tool_call(fake_llm: FakeLLM, isolated_env: Path,
                                          tmp_path: Path) -> None:
    pdf_skill(user_skills(isolated_env))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("skill", {"name": "pdf"}, id="s1")]),
                  Reply(text="Loaded."))
    editor = Editor()
    work = tmp_path / "work"
    work.mkdir()

    async def scenario() -> str:
        async with running(editor, config(tmp_path, fake_llm), cwd=work) as (conn, _):
            sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
            return await prompt(conn, sid, "fill in a.pdf")

    assert asyncio.run(scenario()) == "end_turn"
    started = editor.of("tool_call")
    assert [(u.tool_call_id, u.kind) for u in started] == [("s1", "read")]
    done = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert done and "PDF processing guide" in str(done[-1].content)
    assert editor.asked == []  # a user's skill loads without asking
    assert "- pdf: Use this skill" in fake_llm.requests[0]["messages"][0]["content"]
