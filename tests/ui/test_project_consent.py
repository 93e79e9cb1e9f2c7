"""The chat app in a project whose servers the user has not agreed to: it asks before
starting them, remembers a yes, and leaves them off after a no."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.fakes.recorder import Recorder
from tests.test_project import project_with_server
from tests.ui.kit import SIZE, finish, noted, ready, turn, until, write_config
from tui_agent.config import load
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.consent import ProjectConsent
from tui_agent.ui.startup import Startup
from tui_agent.ui.widgets.messages import Note

SECRET_PROMPT = "the launch code is 0000"

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def app_in(project: Path, fake_llm: FakeLLM, tmp_path: Path) -> AgentApp:
    config = write_config(tmp_path / "user.toml", base_url=fake_llm.base_url)
    return AgentApp(Startup(config=config, cwd=project))


async def test_agreeing_starts_the_project_servers_and_is_remembered(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    project = project_with_server(tmp_path / "proj")
    app = app_in(project, fake_llm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ProjectConsent),
                    what="the project question")
        assert not app.loaded.is_set(), "nothing starts before the answer"
        await pilot.press("y")
        await ready(pilot, app)
        assert [(s.name, s.state) for s in app.backend.statuses()] == [("proj", "connected")]
        await finish(app)
    assert load(cwd=project).held is None, "the agreement is remembered"
    again = app_in(project, fake_llm, tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await ready(pilot, again)
        assert not isinstance(again.screen, ProjectConsent)
        assert [s.name for s in again.backend.statuses()] == ["proj"]
        await finish(again)


async def test_declining_leaves_the_project_servers_off(fake_llm: FakeLLM,
                                                        tmp_path: Path) -> None:
    project = project_with_server(tmp_path / "proj")
    app = app_in(project, fake_llm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ProjectConsent),
                    what="the project question")
        await pilot.press("escape")
        await ready(pilot, app)
        assert app.backend.statuses() == []
        await until(pilot, lambda: any("is not trusted" in str(n.render())
                                       for n in app.transcript.query(Note)),
                    what="the note saying why")
        await finish(app)
    assert load(cwd=project).held is not None, "asked again next time"


def test_the_first_frame_uses_the_project_theme(tmp_path: Path) -> None:
    """The theme is peeked before the config is validated: the project's wins over the
    user's, and the project's JSON server list does not get in the way."""
    project = project_with_server(tmp_path / "proj")
    (project / ".tui-agent").mkdir()
    (project / ".tui-agent" / "config.toml").write_text('[ui]\ntheme = "tui-agent-day"\n')
    user = tmp_path / "user.toml"
    user.write_text('[ui]\ntheme = "tui-agent-ember"\n')
    assert Startup(cwd=project).theme() == "tui-agent-day"
    assert Startup(cwd=project, no_project=True).theme() is None
    assert Startup(config=user, cwd=project).theme() == "tui-agent-ember", "--config wins"


async def test_a_changed_project_asks_again_while_the_app_runs(fake_llm: FakeLLM,
                                                               tmp_path: Path) -> None:
    """Live reload: a new server in the trusted project's file is not started before the
    user agrees to the new content."""
    project = project_with_server(tmp_path / "proj")
    load(cwd=project, trust=True)
    app = app_in(project, fake_llm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        data = json.loads((project / ".mcp.json").read_text())
        data["mcpServers"]["second"] = data["mcpServers"]["proj"]
        (project / ".mcp.json").write_text(json.dumps(data, indent=2))
        await until(pilot, lambda: isinstance(app.screen, ProjectConsent),
                    what="the question again")
        assert "second" not in app.backend.hub.connections  # type: ignore[union-attr]
        await pilot.press("y")
        await until(pilot, lambda: app.backend.hub is not None
                    and "second" in app.backend.hub.connections
                    and app.backend.hub.connections["second"].state == "connected",
                    what="the new server")
        await finish(app)


async def test_a_projects_model_is_asked_about_before_any_prompt_goes_to_it(
        fake_llm: FakeLLM, tmp_path: Path, isolated_env: Path) -> None:
    """A cloned project names a model whose provider prefix carries a URL: the app asks
    first, listing it; after a no the prompt goes to the user's own model and the
    project's endpoint hears nothing; after a yes the project's model is the one asked
    (the user's model is in the user config, below the project's layer)."""
    user = isolated_env / "config" / "tui-agent" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    write_config(user, base_url=fake_llm.base_url)
    with Recorder() as theirs:
        project = tmp_path / "clone"
        (project / ".tui-agent").mkdir(parents=True)
        (project / ".tui-agent" / "config.toml").write_text(
            f'[model]\nname = "oobabooga/{theirs.url}"\n')
        app = AgentApp(Startup(cwd=project))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ProjectConsent),
                        what="the project question")
            listed = str(app.screen.query_one("#body Static").render())
            assert f'model.name = "oobabooga/{theirs.url}"' in listed
            await pilot.press("n")
            await ready(pilot, app)
            await noted(pilot, app, "settings that need your trust are not used")
            fake_llm.push(Reply(text="from your own model"))
            await turn(pilot, app, SECRET_PROMPT, timeout=90)
            assert fake_llm.requests[-1]["messages"][-1]["content"] == SECRET_PROMPT
            assert theirs.connections == 0 and theirs.received == b""
            await finish(app)
        again = AgentApp(Startup(cwd=project))
        async with again.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(again.screen, ProjectConsent),
                        what="the question again")
            await pilot.press("y")
            await ready(pilot, again)
            await turn(pilot, again, SECRET_PROMPT, timeout=90)
            assert SECRET_PROMPT.encode() in theirs.received, "trusted: its model is used"
            await finish(again)
