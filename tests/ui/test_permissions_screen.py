"""``/permissions`` in the app: the rules of every config file with their file:line and
the mode (an SVG snapshot), and removing one (``d``, confirmed with ``y``) from its file,
comments kept, and from force at once."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.kit import finish, make_app, ready, send, shown, until, write_config
from tests.ui.test_snapshots import SIZE, Snap, settle
from tui_agent.config import paths
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.permissions import PermissionsScreen

USER = ("# my rules\n[permissions]\ndeny = [\n  \"mcp__fs__write_file(path=/etc/**)\",  "
        "# never\n]\nallow = [\"mcp__git__*(repo_path=~/work/**)\"]\n")
GIVEN = '\n[permissions]\nask = ["mcp__fs__*"]\nallow = ["mcp__time__*"]\n'


@pytest.fixture
def rules_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentApp:
    """The app on a user config and a ``--config`` file, both holding rules, both under
    a HOME of the test's own (so the snapshot shows ``~/...`` paths)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    user = paths.default_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(USER)
    return make_app(write_config(home / "c.toml", model="openai/snapshot-model",
                                 extra=GIVEN))


def test_the_permissions_screen(snap_compare: Snap, rules_app: AgentApp) -> None:
    """Guards the screen: deny, ask, allow in that order, each with its file:line (the
    home folder as ~), the mode and the keys."""
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await send(pilot, rules_app, "/permissions")
        await shown(pilot, rules_app, PermissionsScreen)
        await pilot.pause()

    assert snap_compare(rules_app, terminal_size=SIZE, run_before=before)


@pytest.mark.anyio
async def test_d_then_y_removes_a_rule_from_its_file_and_from_force(
        rules_app: AgentApp) -> None:
    app = rules_app
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/permissions")
        screen = await shown(pilot, app, PermissionsScreen)
        assert [e.text for e in screen.entries] == [
            "mcp__fs__write_file(path=/etc/**)", "mcp__fs__*",
            "mcp__git__*(repo_path=~/work/**)", "mcp__time__*"]
        policy = app.backend.policy
        assert policy.judge("fs", "write_file", arguments={"path": "/etc/x"}).verdict == \
            "deny"
        await pilot.press("d", "n")  # kept: n answers the question
        assert len(screen.entries) == 4
        await pilot.press("d")
        assert "remove deny rule mcp__fs__write_file(path=/etc/**)" in str(
            screen.query_one(".hint").render())
        await pilot.press("y")
        await until(pilot, lambda: len(screen.entries) == 3, what="the rule removed")
        user = paths.default_config_file()
        text = user.read_text()
        assert tomllib.loads(text)["permissions"]["deny"] == []
        assert "# my rules" in text
        judged = policy.judge("fs", "write_file", arguments={"path": "/etc/x"})
        assert (judged.verdict, judged.by) == ("ask", 'ask rule "mcp__fs__*" (~/c.toml:6)')
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PermissionsScreen),
                    what="the screen closed")
        await finish(app)
