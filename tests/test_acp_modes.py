"""``tui-agent acp``'s session modes are the permission modes, driven by the ACP SDK's
client side against the scripted model and our MCP server: ``default``, ``plan`` and
``auto`` offered with their words, ``--mode`` the session's first, ``session/set_mode``
switching (with ``current_mode_update``). In plan mode a changing tool is refused
without asking the editor and the model is told (with the message and in the refusal); a
tool its server annotates ``readOnlyHint`` runs; in auto mode a tool runs without asking."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tui_agent.core.permissions.modes import MODE_WORDS, PLAN_PROMPT, PLAN_REFUSAL

pytestmark = pytest.mark.slow

def test_plan_then_auto_through_set_mode(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("fake__add", {"a": 1, "b": 2}, id="r"),
                                    FakeToolCall("fake__echo", {"text": "3"}, id="w")]),
                  Reply(text="The plan: say 3."),
                  Reply(tool_calls=[FakeToolCall("fake__echo", {"text": "3"}, id="w2")]),
                  Reply(text="said"))
    editor = Editor(answers=["reject_once"])  # asked at all: the test sees it in `asked`

    async def scenario() -> None:
        from acp import RequestError

        conf = config(tmp_path, fake_llm, fake_server_toml("fake", more='auto = ["add"]\n'))
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            modes = session.modes
            assert modes is not None and modes.current_mode_id == "default"
            assert [(m.id, m.name, m.description) for m in modes.available_modes] == [
                ("default", "Default", MODE_WORDS["default"]),
                ("plan", "Plan", MODE_WORDS["plan"]), ("auto", "Auto", MODE_WORDS["auto"])]
            sid = session.session_id
            await conn.set_session_mode(session_id=sid, mode_id="plan")
            assert await prompt(conn, sid, "add 1 and 2, say it") == "end_turn"
            await conn.set_session_mode(session_id=sid, mode_id="auto")
            assert await prompt(conn, sid, "go ahead") == "end_turn"
            with pytest.raises(RequestError) as caught:
                await conn.set_session_mode(session_id=sid, mode_id="yolo")
            assert "the modes are default, plan, auto" in str(caught.value.data)

    asyncio.run(scenario())
    assert editor.asked == []  # neither the refusal nor auto mode's run asked the editor
    assert [u.current_mode_id for u in editor.of("current_mode_update")] == ["plan", "auto"]
    planned = fake_llm.requests[0]["messages"][-1]["content"]
    assert planned.startswith("add 1 and 2, say it") and PLAN_PROMPT in planned
    results = {m["tool_call_id"]: m["content"] for m in fake_llm.requests[1]["messages"]
               if m["role"] == "tool"}
    assert results["r"] == "3"  # the server annotates add readOnlyHint: it ran
    assert PLAN_REFUSAL in results["w"]
    assert PLAN_PROMPT not in json.dumps(fake_llm.requests[2]["messages"][-1])
    assert fake_llm.requests[3]["messages"][-1]["content"] == "3"  # echo ran: auto mode
    statuses = {u.tool_call_id: u.status for u in editor.of("tool_call_update")
                if u.status in ("completed", "failed")}
    assert statuses == {"r": "completed", "w": "failed", "w2": "completed"}


def test_mode_flag_starts_the_session_in_that_mode(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``--mode plan`` over ``[permissions] default_mode = "auto"``: the flag wins."""
    editor = Editor()

    async def scenario() -> str | None:
        conf = config(tmp_path, fake_llm, extra='[permissions]\ndefault_mode = "auto"\n')
        async with running(editor, conf, "--mode", "plan", cwd=tmp_path) as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            return session.modes.current_mode_id if session.modes else None

    assert asyncio.run(scenario()) == "plan"
