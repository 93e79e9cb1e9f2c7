"""``/init`` over ACP: offered among the session's commands; the prompt ``/init`` runs the
app's turn with the fixed instruction, then asks to write the draft with
``session/request_permission`` whose tool call carries the ACP ``diff`` content (an
absolute path, no ``oldText`` for a new file, the file's old text otherwise); allowed it
writes exactly the draft, rejected nothing, and an agent message says which."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, prompt, running
from tests.fakes.llm_server import FakeLLM
from tests.test_init_run import DRAFT, answer

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "home" / "shop"
    (root / ".git").mkdir(parents=True)
    return root


def test_init_is_offered_and_writes_the_draft_once_allowed(
        fake_llm: FakeLLM, tmp_path: Path, project: Path) -> None:
    memory = project / "AGENTS.md"
    fake_llm.push(answer(DRAFT), answer("# Shop\n\nRun `make check`.\n"))
    editor = Editor(answers=["allow_once", "reject_once"])

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            await editor.until(lambda: bool(editor.of("available_commands_update")))
            offered = {c.name: c.description for c in
                       editor.of("available_commands_update")[-1].available_commands}
            assert "draft the project's AGENTS.md" in offered["init"]
            assert await prompt(conn, sid, "/init") == "end_turn"
            assert memory.read_text(encoding="utf-8") == DRAFT
            assert f"/init: wrote {memory} (7 lines): the next turn reads it as memory" \
                in editor.text()
            assert await prompt(conn, sid, "/init") == "end_turn"

    asyncio.run(scenario())
    assert "<agents-md>" in str(fake_llm.requests[0]["messages"][-1]["content"])
    (first, options), (second, _) = editor.asked
    assert [o.option_id for o in options] == ["allow_once", "reject_once"]
    assert first.kind == "edit" and first.title == "tui-agent: /init"
    diff = [c for c in first.content or [] if c.type == "diff"]
    assert [(d.path, d.old_text, d.new_text) for d in diff] == [(str(memory), None, DRAFT)]
    wire = diff[0].model_dump(by_alias=True, exclude_none=True)
    assert wire == {"type": "diff", "path": str(memory), "newText": DRAFT}
    diff = [c for c in second.content or [] if c.type == "diff"]
    assert [(d.old_text, d.new_text) for d in diff] == [(DRAFT, "# Shop\n\nRun `make check`.\n")]
    assert memory.read_text(encoding="utf-8") == DRAFT, "rejected: not written"
    assert f"/init: denied (rejected in the editor): {memory} not written" in editor.text()


def test_init_without_a_project_says_so_and_sends_nothing(
        fake_llm: FakeLLM, tmp_path: Path, project: Path) -> None:
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            home = str(tmp_path / "home")
            sid = (await conn.new_session(cwd=home, mcp_servers=[])).session_id
            assert await prompt(conn, sid, "/init") == "end_turn"

    asyncio.run(scenario())
    assert fake_llm.requests == [] and editor.asked == []
    assert "/init: no project here to write AGENTS.md in" in editor.text()
