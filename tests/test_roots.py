"""MCP roots: the project directory (where tui-agent runs) and ``[agent] roots`` are what
a server may work in; a server's own ``roots`` narrows that; a change of ``[agent] roots``
is told to connected servers. Checked against the reference ``server-filesystem`` started
with no directory argument, which takes its allowed directories from the client's roots,
and keeps them current on ``notifications/roots/list_changed``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.conftest import tagged_env
from tests.reference import START, filesystem
from tests.test_hub import call
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide
from tui_agent.tools.frontdesk import FrontDesk
from tui_agent.tools.hub import Hub
from tui_agent.tools.roots import roots_of


def test_the_roots_of_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "proj"
    shared = ["~/src", "docs", str(project)]
    assert roots_of(ServerConfig(command="x"), shared, project) == [
        project, tmp_path / "home" / "src", project / "docs"]  # each once, ~ and relative
    narrowed = ServerConfig(command="x", roots=["~/src/one"])
    assert roots_of(narrowed, shared, project) == [tmp_path / "home" / "src" / "one"]
    assert roots_of(ServerConfig(command="x", roots=[]), shared, project) == []


@pytest.mark.slow
@pytest.mark.anyio
async def test_server_filesystem_without_a_directory_works_in_the_project(
        tmp_path: Path) -> None:
    project, other = tmp_path / "proj", tmp_path / "notes"
    project.mkdir()
    other.mkdir()
    (project / "README.md").write_text("hello from the project\n")
    (other / "todo.txt").write_text("water the plants\n")
    desk = FrontDesk(project=project)
    server = ServerConfig(command=filesystem(), env=tagged_env(),
                          startup_timeout=START, protocol="legacy",
                          auto=["*"])
    async with Hub({"fs": server}, log_dir=tmp_path / "logs", default_timeout=20,
                   client_side=lambda n, c: desk.side(n, c, ClientSide())) as hub:
        await hub.wait_all()
        assert hub.statuses()[0].state == "connected", hub.statuses()[0].last_error
        await allowed(hub, project)
        text, is_error = await call(hub, "fs__read_text_file", path=str(project / "README.md"))
        assert (text, is_error) == ("hello from the project\n", False)
        text, is_error = await call(hub, "fs__read_text_file", path=str(other / "todo.txt"))
        assert is_error and "outside allowed directories" in text, text
        desk.shared_roots = [str(other)]  # [agent] roots, as a reloaded config says
        await hub.roots_changed()
        await allowed(hub, other)
        text, is_error = await call(hub, "fs__read_text_file", path=str(other / "todo.txt"))
        assert (text, is_error) == ("water the plants\n", False)


async def allowed(hub: Hub, directory: Path) -> None:
    """Wait until the server lists ``directory`` as allowed: it asks for the roots on its
    own time, after the handshake or a change notice. By the clock: a call takes far
    longer on a busy machine than a count of them assumes."""
    deadline = asyncio.get_running_loop().time() + 60
    while asyncio.get_running_loop().time() < deadline:
        text, _ = await call(hub, "fs__list_allowed_directories")
        if str(directory) in text:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{directory} never allowed in 60 s: {text}")
