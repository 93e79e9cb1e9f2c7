"""``/rewind [N] [files]`` over ACP with the real built-in server ``local``: the scripted
model edits a file in two turns (each edit allowed in the editor); ``/rewind 1 files``
puts the file back as it was before the last message, the session goes on (same id) with
the messages before it, the conversation as it was is kept under another id, and the
answer lists what was restored. Bad counts are refused by name, nothing done."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, prompt, running
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project, local_table
from tui_agent.config import paths
from tui_agent.core.session import load

pytestmark = pytest.mark.slow


def edit(old: str, new: str, call_id: str) -> Reply:
    return Reply(tool_calls=[FakeToolCall("local__edit", {
        "path": "app.py", "old_string": old, "new_string": new}, id=call_id)])


def test_rewind_files_restores_and_goes_on_from_before_the_message(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = local_project(tmp_path, monkeypatch, {"app.py": "v = 1\n"}, enter=False)
    target = project / "app.py"
    fake_llm.push(edit("v = 1", "v = 2", "e1"), Reply(text="two"),
                  edit("v = 2", "v = 3", "e2"), Reply(text="three"),
                  Reply(text="back at two"))
    editor = Editor(answers=["allow_once", "allow_once"])
    local = local_table()

    async def scenario() -> tuple[str, list[str]]:
        async with running(editor, config(tmp_path, fake_llm, local), cwd=project) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            await editor.until(lambda: any(c.name == "rewind" for u in editor.of(
                "available_commands_update") for c in u.available_commands))
            assert await prompt(conn, sid, "make it two") == "end_turn"
            assert await prompt(conn, sid, "make it three") == "end_turn"
            assert target.read_text(encoding="utf-8") == "v = 3\n"
            said = []
            for words in ("/rewind 3", "/rewind x", "/rewind 1 files"):
                before = editor.text()
                assert await prompt(conn, sid, words) == "end_turn"
                said.append(editor.text()[len(before):])
            assert await prompt(conn, sid, "where are we?") == "end_turn"
            return sid, said

    sid, (too_far, bad, done) = asyncio.run(scenario())
    assert "this conversation has 2 messages of yours" in too_far
    assert "not 'x'" in bad and "[N] [files]" in bad
    assert "Rewound to before your message “make it three”" in done
    assert "restored 1 file: app.py" in done
    assert target.read_text(encoding="utf-8") == "v = 2\n"
    sent = json.dumps(fake_llm.requests[-1]["messages"])
    assert "make it two" in sent and "make it three" not in sent
    assert "where are we?" in sent
    # the session's id names the branch; the conversation as it was is kept
    files = {p.stem: p for p in paths.sessions_dir().glob("*.jsonl")}
    branch = load(files[sid])
    assert [e.message.get("content") for e in branch.entries
            if e.message.get("role") == "user"] == ["make it two", "where are we?"]
    kept_id = done.split("it is kept as ")[1].split(".")[0]
    kept = load(files[kept_id])
    assert branch.meta["branched_from"]["id"] == kept_id
    assert [e.message.get("content") for e in kept.entries
            if e.message.get("role") == "user"] == ["make it two", "make it three"]


def test_rewind_without_files_names_the_files_it_leaves(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = local_project(tmp_path, monkeypatch, {"app.py": "v = 1\n"}, enter=False)
    target = project / "app.py"
    fake_llm.push(edit("v = 1", "v = 2", "e1"), Reply(text="two"))
    editor = Editor(answers=["allow_once"])
    local = local_table()

    async def scenario() -> str:
        async with running(editor, config(tmp_path, fake_llm, local), cwd=project) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            assert await prompt(conn, sid, "/rewind") == "end_turn"
            nothing = editor.text()
            assert await prompt(conn, sid, "make it two") == "end_turn"
            assert await prompt(conn, sid, "/rewind") == "end_turn"
            return nothing + "\n---\n" + editor.text()

    said = asyncio.run(scenario())
    assert "nothing to rewind yet" in said.split("---")[0]
    assert "files left as they are: 1 file (app.py)" in said
    assert target.read_text(encoding="utf-8") == "v = 2\n"

