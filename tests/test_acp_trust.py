"""A project whose files wait for trust, over ACP: ``session/new`` and ``session/load``
there each send the editor one agent message naming what is held (the headless warning's
list) and how to trust it; ``/trust`` asks with ``session/request_permission`` listing
exactly what is held: "Not now" trusts nothing, "Trust this project" records it, offers
the project's commands at once and reads its AGENTS.md from the next turn. A trusted
project gets no message."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, prompt, running
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_command_files import REVIEW
from tui_agent.config.show import held_lines
from tui_agent.config.trust import content_trusted
from tui_agent.wiring.prompt import held_in

pytestmark = pytest.mark.slow
HELD = "is not trusted yet"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "home" / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("SHOP-MEMORY-NOTE\n", encoding="utf-8")
    (root / ".claude/commands").mkdir(parents=True)
    (root / ".claude/commands/review.md").write_text(REVIEW, encoding="utf-8")
    return root


def _offered(editor: Editor) -> set[str]:
    return {c.name for c in editor.of("available_commands_update")[-1].available_commands}


def test_a_held_project_is_named_and_trust_asks_with_its_list(
        fake_llm: FakeLLM, tmp_path: Path, project: Path) -> None:
    held = held_in(project)
    assert held is not None
    lines = held_lines(held)
    fake_llm.push(Reply(text="hi"), Reply(text="again"))
    editor = Editor(answers=["reject_once", "trust"])

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            await editor.until(lambda: bool(editor.of("available_commands_update")))
            notice = editor.text()
            assert f"the project in {project} {HELD}" in notice
            assert "memory AGENTS.md: instructions sent to the model" in notice
            assert "commands in .claude/commands: review.md" in notice
            assert "send /trust here" in notice
            assert "review" not in _offered(editor) and "trust" in _offered(editor)
            assert await prompt(conn, sid, "hello") == "end_turn"

            assert await prompt(conn, sid, "/trust") == "end_turn"  # not now
            assert not content_trusted(project) and "/trust: not trusted" in editor.text()
            assert await prompt(conn, sid, "/trust") == "end_turn"  # trusted
            assert content_trusted(project)
            await editor.until(lambda: "review" in _offered(editor))
            assert await prompt(conn, sid, "hello again") == "end_turn"

            before = len(editor.updates)
            await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
            await editor.until(lambda: any(
                u.session_update == "available_commands_update"
                for _, u in editor.updates[before:]))
            assert HELD not in "".join(u.content.text for _, u in editor.updates[before:]
                                       if u.session_update == "agent_message_chunk"
                                       and u.content.type == "text")

    asyncio.run(scenario())
    assert "SHOP-MEMORY-NOTE" not in fake_llm.requests[0]["messages"][0]["content"]
    assert "SHOP-MEMORY-NOTE" in fake_llm.requests[1]["messages"][0]["content"]
    assert editor.text().count(HELD) == 1, "one message, at session/new"
    (first, options), (second, _) = editor.asked
    assert [(o.option_id, o.kind) for o in options] == [("trust", "allow_always"),
                                                        ("reject_once", "reject_once")]
    assert first.title == f"Trust the project in {project}?"
    shown = first.content[0].content.text  # type: ignore[index]
    assert shown == "Its files ask for:\n" + "\n".join(f"- {line}" for line in lines)
    assert "/trust: trusted the project in" in editor.text()


def test_session_load_in_a_held_project_says_it_too(
        fake_llm: FakeLLM, tmp_path: Path, project: Path) -> None:
    fake_llm.push(Reply(text="hi"))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            assert await prompt(conn, sid, "hello") == "end_turn"
            await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
            await editor.until(lambda: editor.text().count(HELD) == 2)

    asyncio.run(scenario())
    assert editor.asked == [], "nothing is asked unless the person sends /trust"
