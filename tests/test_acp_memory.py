"""The system prompt applies to ACP sessions: tui-agent's own part, the environment of
the session's ``cwd`` (the editor's project, not the agent's process), that project's
AGENTS.md once the project is trusted, and ``/context`` names the parts with tokens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, prompt, running
from tests.fakes.llm_server import FakeLLM, Reply
from tui_agent.config.project import CONTENT_TRUSTED, content_trust_store


@pytest.mark.parametrize("trusted", [True, False])
def test_an_acp_session_reads_its_projects_memory_when_trusted(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        trusted: bool) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "home" / "project"
    (project / ".git").mkdir(parents=True)
    (project / "AGENTS.md").write_text("ACP-PROJECT-NOTE\n", encoding="utf-8")
    if trusted:
        content_trust_store().record(project, CONTENT_TRUSTED)
    fake_llm.push(Reply(text="hi"))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            await prompt(conn, sid, "hello")
            assert await prompt(conn, sid, "/context") == "end_turn"

    asyncio.run(scenario())
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert system.startswith("You are tui-agent")
    assert f"- Working directory: {project}" in system
    assert ("ACP-PROJECT-NOTE" in system) is trusted
    assert "System prompt parts: tui-agent " in editor.text() and ", environment " in editor.text()
    assert (", memory " in editor.text()) is trusted
