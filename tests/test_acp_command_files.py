"""Commands from files over ACP: a trusted project's ``.claude/commands/review.md`` is in
the session's ``available_commands_update`` (with its description, scope and hint), and
``/review ARGS`` sends its expanded body as the person's message, with the command's
model for that turn only; an untrusted project's commands are not offered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, prompt, running
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_command_files import REVIEW
from tui_agent.config import load

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "shop"
    (root / ".claude/commands").mkdir(parents=True)
    (root / ".claude/commands/review.md").write_text(REVIEW, encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs/style.md").write_text("Tabs, never spaces.\n", encoding="utf-8")
    return root


def _offered(editor: Editor) -> dict[str, object]:
    last = editor.of("available_commands_update")[-1]
    return {c.name: c for c in last.available_commands}


def test_a_trusted_projects_command_is_offered_and_runs(fake_llm: FakeLLM, tmp_path: Path,
                                                        project: Path) -> None:
    load(cwd=project, trust=True)  # the person trusted it (in the app, or --trust-project)
    fake_llm.push(Reply(text="Reviewed."), Reply(text="Hi."))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=project) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            await editor.until(lambda: bool(editor.of("available_commands_update")))
            assert await prompt(conn, sid, "/review 456 high Ada") == "end_turn"
            assert await prompt(conn, sid, "hello") == "end_turn"

    asyncio.run(scenario())
    review = _offered(editor)["review"]
    assert review.description == "Review a pull request (project)"  # type: ignore[attr-defined]
    assert review.input.root.hint == "[pr-number] [priority] [assignee]"  # type: ignore[attr-defined]
    sent = json.dumps(fake_llm.requests[0]["messages"][-1]["content"])
    assert "Review PR #456 with priority high and assign to Ada." in sent
    assert "Tabs, never spaces." in sent, "@docs/style.md read as a typed @path"
    assert fake_llm.requests[0]["model"] == "review-model"
    assert fake_llm.requests[1]["model"] == "fake-model", "the command's model: one turn"
    assert "!`git status` not run" in editor.text()


def test_an_untrusted_projects_commands_are_not_offered(fake_llm: FakeLLM, tmp_path: Path,
                                                        project: Path) -> None:
    fake_llm.push(Reply(text="What review?"))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=project) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            await editor.until(lambda: bool(editor.of("available_commands_update")))
            assert await prompt(conn, sid, "/review 456") == "end_turn"

    asyncio.run(scenario())
    assert "review" not in _offered(editor) and "compact" in _offered(editor)
    assert fake_llm.requests[0]["messages"][-1]["content"] == "/review 456"


def test_a_command_file_written_during_the_session_runs(fake_llm: FakeLLM, tmp_path: Path,
                                                        project: Path) -> None:
    """A command file the user adds while the editor's session is open is offered (a new
    ``available_commands_update``) and runs when sent: no new session needed. (A new file
    in the project's folder waits for trust again: the trust tests cover that.)"""
    load(cwd=project, trust=True)
    fake_llm.push(Reply(text="Tested."))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=project) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            await editor.until(lambda: bool(editor.of("available_commands_update")))
            assert "test-it" not in _offered(editor)
            user = tmp_path / "home/.claude/commands"
            user.mkdir(parents=True, exist_ok=True)
            (user / "test-it.md").write_text(
                "---\ndescription: Run the tests\n---\nRun the tests of $1.\n",
                encoding="utf-8")
            assert await prompt(conn, sid, "/test-it shop") == "end_turn"

    asyncio.run(scenario())
    assert _offered(editor)["test-it"].description == "Run the tests (user)"  # type: ignore[attr-defined]
    assert fake_llm.requests[0]["messages"][-1]["content"] == "Run the tests of shop."
