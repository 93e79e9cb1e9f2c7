"""Project memory in the app: the trust question lists the project's AGENTS.md, a yes
lets the model read it, ``/memory`` lists it with its tokens and opens it in ``$EDITOR``
(the edit reaches the next turn), ``/context`` shows the system prompt's parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import SIZE, finish, noted, ready, send, turn, until, write_config
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.consent import ProjectConsent
from tui_agent.ui.startup import Startup

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_memory_is_trusted_listed_edited_and_counted(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "home" / "proj"
    (project / ".git").mkdir(parents=True)
    memory = project / "AGENTS.md"
    memory.write_text("APP-NOTE\n", encoding="utf-8")
    monkeypatch.chdir(project)
    monkeypatch.setenv("EDITOR", "sh -c 'echo EDITED-NOTE >> \"$1\"' sh")
    fake_llm.push(Reply(text="one"), Reply(text="two"))
    config = write_config(tmp_path / "user.toml", base_url=fake_llm.base_url)
    app = AgentApp(Startup(config=config, cwd=project))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ProjectConsent)
                    and app.screen.is_mounted, what="the project question")
        asked = "\n".join(str(s.render()) for s in app.screen.query(Static))
        assert "memory AGENTS.md: instructions sent to the model with every request" in asked
        assert "would give the model instructions" in asked
        await pilot.press("y")
        await ready(pilot, app)
        await turn(pilot, app, "hi", timeout=60)
        assert "APP-NOTE" in fake_llm.requests[0]["messages"][0]["content"]

        await send(pilot, app, "/memory")
        listed = await noted(pilot, app, "memory: 1 file")
        assert f"1. {memory}  (project, " in listed and "tokens" in listed

        await send(pilot, app, "/context")
        report = await noted(pilot, app, "context:")
        for part in ("tui-agent", "environment", "memory"):
            assert f"\n    {part} " in report, part

        await send(pilot, app, "/memory 1")
        await noted(pilot, app, "saved: the next turn reads it")
        await turn(pilot, app, "again")
        assert "EDITED-NOTE" in fake_llm.requests[1]["messages"][0]["content"]
        await finish(app)
