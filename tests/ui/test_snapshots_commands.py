"""Snapshots of the ``/`` completion menu: the built-in commands and the user's command
files (with their hints, descriptions and where they come from) above the prompt, what
was typed still in sight."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.test_command_files import REVIEW
from tests.ui.kit import until
from tests.ui.test_snapshots import Snap, app_for, settle
from tui_agent.ui.app import AgentApp
from tui_agent.ui.widgets.command_menu import CommandMenu
from tui_agent.ui.widgets.prompt import PromptInput


@pytest.fixture(autouse=True)
def user_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    folder = home / ".claude/commands"
    (folder / "git").mkdir(parents=True)
    (folder / "review.md").write_text(REVIEW, encoding="utf-8")
    (folder / "git/commit.md").write_text("---\ndescription: Commit the staged changes\n"
                                          "argument-hint: [message]\n---\nCommit: $1\n",
                                          encoding="utf-8")


def typing(*keys: str) -> Any:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, AgentApp)
        prompt = app.chat.query_one(PromptInput)
        await until(pilot, lambda: any(e.name == "review" for e in prompt.entries()),
                    what="the command files read")
        await pilot.press(*keys)
        await until(pilot, lambda: app.chat.query_one(CommandMenu).display, what="the menu")
        await pilot.pause()

    return before


def test_menu_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    """``/`` at 80x24: the menu's first commands above the prompt, the ``/`` typed."""
    assert snap_compare(app_for(tmp_path), terminal_size=(80, 24), run_before=typing("/"))


def test_menu_narrowed_at_120x40(snap_compare: Snap, tmp_path: Path) -> None:
    """``/re`` then down at 120x40: the commands that fit, the user's ``/review`` with its
    hint, description and origin highlighted."""
    assert snap_compare(app_for(tmp_path), terminal_size=(120, 40),
                        run_before=typing("/", "r", "e", "down"))


def test_menu_of_a_subfolder_command(snap_compare: Snap, tmp_path: Path) -> None:
    """``/com`` at 80x24: a command in a subfolder says where it is (``user:git``)."""
    assert snap_compare(app_for(tmp_path), terminal_size=(80, 24),
                        run_before=typing("/", "c", "o", "m"))
