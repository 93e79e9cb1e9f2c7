"""Adding a server from inside the app: ``/mcp add`` with the words of ``tui-agent mcp
add``, and the servers screen's ``a`` with its dialog. The real app as the command
builds it (``Startup``, so the config reloads), a config file on disk with comments,
and our MCP server over stdio: the server is written, started by the hub and shown."""

from __future__ import annotations

import shlex
import sys
import tomllib
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.conftest import ROOT, TAG_VAR
from tests.fakes.llm_server import FakeLLM
from tests.ui.kit import (
    SIZE,
    finish,
    noted,
    notes,
    open_servers,
    ready,
    send,
    shown,
    until,
    write_config,
)
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.add_server import AddServerScreen
from tui_agent.ui.screens.servers import ServersScreen
from tui_agent.ui.startup import Startup

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def words(name: str, *server_args: str) -> str:
    import os

    return shlex.join([name, "--env", f"{TAG_VAR}={os.environ[TAG_VAR]}", "--env",
                       f"PYTHONPATH={ROOT}", "--", sys.executable, "-m",
                       "tests.fakes.mcp_server", *server_args])


def app_on(tmp_path: Path, fake: FakeLLM) -> tuple[AgentApp, Path]:
    config = write_config(tmp_path / "c.toml", base_url=fake.base_url, servers={"a": []})
    return AgentApp(Startup(config=config, cwd=tmp_path)), config


async def test_slash_mcp_add_writes_starts_and_tells(fake_llm: FakeLLM, tmp_path: Path) -> None:
    app, config = app_on(tmp_path, fake_llm)
    before = config.read_text()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, f"/mcp add {words('added', '--name', 'from-slash')}")
        said = await noted(pilot, app, "added added to")
        assert f"{config}:" in said and "starting it" in said
        told = await noted(pilot, app, "added: connected, ")
        assert told.endswith(" tools"), notes(app)
        hub = app.backend.hub
        assert hub is not None and hub.connections["added"].state == "connected"
        assert hub.connections["added"].status().server_info == "from-slash 1.0"
        assert hub.connections["a"].restarts == 0, "the others are left alone"
        text = config.read_text()
        assert text.startswith(before)
        assert tomllib.loads(text)["servers"]["added"]["command"] == sys.executable
        await send(pilot, app, "/mcp add added -- echo")
        clash = await noted(pilot, app, "a server named 'added' is already configured")
        assert f"{config}:" in clash
        assert config.read_text() == text
        await send(pilot, app, "/mcp remove added")
        await noted(pilot, app, "/mcp: /mcp add NAME -- COMMAND")
        await finish(app)


async def test_servers_screen_a_adds_one_and_shows_it(fake_llm: FakeLLM, tmp_path: Path) -> None:
    app, config = app_on(tmp_path, fake_llm)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        screen = await open_servers(pilot, app)
        await pilot.press("a")
        await shown(pilot, app, AddServerScreen, "the dialog")
        dialog = app.screen
        field = dialog.query_one("#words", Input)
        field.value = "bad.name -- echo"
        await pilot.press("enter")
        problem = dialog.query_one("#problem", Static)
        await until(pilot, lambda: "is not a server name" in str(problem.render()),
                    what="the problem under the line")
        assert app.screen is dialog and field.value == "bad.name -- echo", "kept for fixing"
        field.value = words("fromscreen", "--name", "from-screen")
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen, what="the dialog to close")
        message = str(screen.query_one("#message", Static).render())
        assert message.startswith("added fromscreen to ")
        hub = app.backend.hub
        assert hub is not None
        await until(pilot, lambda: "fromscreen" in hub.connections
                    and hub.connections["fromscreen"].state == "connected",
                    timeout=30, what="the new server to connect")
        await until(pilot, lambda: "fromscreen" in _rows(screen), what="its row")
        assert "[servers.fromscreen]" in config.read_text()
        await pilot.press("escape")
        await finish(app)


async def test_escape_closes_the_dialog_and_writes_nothing(fake_llm: FakeLLM,
                                                           tmp_path: Path) -> None:
    app, config = app_on(tmp_path, fake_llm)
    before = config.read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        screen = await open_servers(pilot, app)
        await pilot.press("a")
        await shown(pilot, app, AddServerScreen)
        app.screen.query_one("#words", Input).value = words("never")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert config.read_bytes() == before
        await finish(app)


def _rows(screen: ServersScreen) -> list[str]:
    from textual.widgets import DataTable

    table = screen.query_one("#servers", DataTable)
    return [str(key.value) for key in table.rows]


async def test_a_server_that_fails_to_start_is_told_with_its_env_secret_masked(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """The note on how the added server's start went quotes its error, whose stderr
    echoes the token given with ``--env``: the token shows masked."""
    secret = "stderr-secret-55555"
    app, config = app_on(tmp_path, fake_llm)
    leaky = shlex.join(["leaky", "--env", f"MY_TOKEN={secret}", "--", "sh", "-c",
                        'echo "failed with $MY_TOKEN" >&2; exit 1'])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, f"/mcp add {leaky}")
        told = await noted(pilot, app, "leaky is failed: ")
        assert "failed with ***" in told, told
        assert all(secret not in note for note in notes(app)), notes(app)
        assert secret in config.read_text()  # written as given; only shown masked
        await finish(app)
