"""The servers screen's detail pane, against a real server: a server whose instructions
are longer than the pane still shows its state and login line at the top (what a person
opens the screen to see), and the pane scrolls down to the rest (logs, log file, calls);
ctrl+s, which opened the screen, closes it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Static

from tests.conftest import ROOT
from tests.reference import free_port, http_server
from tests.ui.kit import make_app, notes, open_servers, ready, until, write_config
from tests.ui.kit import toml_value as q
from tests.zygote import module

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

LONG = "\\n".join(f"step {i}: do thing {i} first" for i in range(40))
"""Forty lines of instructions (``\\n``-joined, as the fake server's flag takes them)."""


def visible_lines(detail: Static) -> list[str]:
    """The lines of the detail text on screen now: inside the widget's own region (cut by
    its height) and inside the region of the container it scrolls in."""
    text = str(detail.render()).splitlines()
    assert detail.parent is not None
    shown = detail.region.intersection(detail.parent.content_region)  # type: ignore[attr-defined]
    return [line for i, line in enumerate(text)
            if shown.y <= detail.region.y + i < shown.bottom]


@contextlib.asynccontextmanager
async def servers_screen(tmp_path: Path, server: str, size: tuple[int, int]
                         ) -> AsyncIterator[tuple[Any, Any, Any, Static]]:
    """The app at ``size`` with ``server`` (a ``[servers.NAME]`` table) in its config and
    the servers screen open: (pilot, app, screen, its detail pane's text)."""
    app = make_app(write_config(tmp_path / "c.toml", extra=server))
    async with app.run_test(size=size) as pilot:
        await ready(pilot, app)
        screen = await open_servers(pilot, app)
        yield pilot, app, screen, screen.query_one("#detail", Static)


async def test_state_and_login_show_first_and_the_rest_scrolls(tmp_path: Path) -> None:
    port = free_port()
    command = module("tests.fakes.mcp_server", "--transport", "http", "--port", str(port),
                     "--instructions", LONG)
    with http_server(command, port, {"PYTHONPATH": str(ROOT)}, "/mcp") as url:
        server = f"\n[servers.long]\nurl = {q(url)}\ntransport = \"http\"\n"
        async with servers_screen(tmp_path, server, (80, 24)) as (pilot, app, screen, detail):
            pane = detail.parent
            await until(pilot, lambda: "step 0:" in str(detail.render()), what="instructions")
            await pilot.pause()
            shown = visible_lines(detail)
            assert shown[0].startswith("connected · fake 1.0"), shown
            assert any(line.startswith("login: ") for line in shown), shown
            assert isinstance(pane, VerticalScroll)
            assert pane.max_scroll_y > 0  # the pane is smaller than what it holds
            pane.scroll_end(animate=False)
            await pilot.pause()
            shown = visible_lines(detail)
            assert shown[-1] == str(detail.render()).splitlines()[-1], shown
            assert not any(line.startswith("connected") for line in shown)
            await pilot.press("ctrl+s")  # the key that opened the screen closes it
            await until(pilot, lambda: app.screen is not screen, what="the screen closed")
            await app.action_quit()


SECRET = "stderr-secret-55555"
LEAKY = 'echo "token=$MY_TOKEN" >&2; echo "failed with $MY_TOKEN" >&2; exit 1'
"""A stdio server that prints the token of its env to stderr and exits."""


async def test_a_failing_servers_stderr_and_error_show_its_env_secret_masked(
        tmp_path: Path) -> None:
    server = (f"\n[servers.leaky]\ncommand = \"sh\"\nargs = [\"-c\", {q(LEAKY)}]\n"
              f"env = {{ MY_TOKEN = {q(SECRET)} }}\nstartup_timeout = 10\n")
    async with servers_screen(tmp_path, server, (100, 40)) as (pilot, app, screen, detail):
        await until(pilot, lambda: "token=" in str(detail.render()), what="the stderr lines")
        text = str(detail.render())
        assert "last error: " in text and "token=***" in text, text
        assert SECRET not in text, text
        assert all(SECRET not in note for note in notes(app))
        await app.action_quit()
