"""SVG snapshot of the servers screen's add dialog (``a``), reached as a person reaches
it (``ctrl+s``, then ``a``), with words the real ``mcp add`` parser refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, Static

from tests.ui.kit import until
from tests.ui.test_snapshots import SIZE, Snap, app_for, settle
from tui_agent.ui.screens.add_server import AddServerScreen


def test_the_add_server_dialog_says_what_is_wrong(snap_compare: Snap, tmp_path: Path) -> None:
    """The dialog over the servers screen: how to write the words, the words typed (kept
    for fixing), and under them why the parser refused them, in the error colour."""
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("a")
        await until(pilot, lambda: isinstance(pilot.app.screen, AddServerScreen))
        dialog = pilot.app.screen
        dialog.query_one("#words", Input).value = "my.server -- uvx mcp-server-time"
        await pilot.press("enter")
        await until(pilot, lambda: "not a server name" in str(
            dialog.query_one("#problem", Static).render()))
        dialog.query_one("#words", Input).cursor_blink = False
        await pilot.pause()

    assert snap_compare(app_for(tmp_path), terminal_size=SIZE, run_before=before)
