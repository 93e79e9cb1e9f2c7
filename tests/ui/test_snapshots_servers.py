"""SVG snapshots of the servers screen (ctrl+s): every server's state with a failed one's
error and stderr tail, a server's tools with their approvals, long instructions in a pane
that scrolls. Built as tests/ui/test_snapshots.py builds the app (no servers, fixed
model): the screen is fed its controls, so nothing depends on a server's timing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.ui.test_snapshots import SIZE, Before, Snap, app_for, settle
from tui_agent.core.permissions import Policy, ServerRules
from tui_agent.tools.connection import ServerStatus
from tui_agent.tools.spec import ToolSpec
from tui_agent.ui.screens.servers import ServerControls, ServersScreen


def failing_controls() -> ServerControls:
    statuses = [
        ServerStatus("git", "connected", "stdio", 2, None, (), "2025-11-25", "mcp-git 1.0", 0,
                     "closed", None),
        ServerStatus("broken", "failed", "stdio", 0,
                     "the server exited during start-up (exit code 1); next try in 30 s",
                     ("Traceback (most recent call last):", "ModuleNotFoundError: No module "
                      "named 'missing_dep'"), None, None, 2, "open", Path("/logs/broken.log")),
        ServerStatus("web", "disabled", "http", 0, None, (), None, None, 0, "closed", None),
    ]
    specs = {"git": [ToolSpec("git__status", "git", "status", "Show the working tree status."),
                     ToolSpec("git__commit", "git", "commit", "Record changes."),
                     ToolSpec("git__push", "git", "push", "Update remote refs.")]}
    policy = Policy({"git": ServerRules(auto=("status",), deny=("push",))})

    async def enable(name: str) -> str | None:
        return None

    async def disable(name: str) -> None:
        return None

    return ServerControls(lambda: statuses, lambda s: specs.get(s, []), policy,
                          lambda name: None, enable, disable)


def servers_screen(*keys: str) -> Before:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.app.push_screen(ServersScreen(failing_controls()))
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause(0.2)
    return before


def test_servers_screen_with_a_failed_server(snap_compare: Snap, tmp_path: Path) -> None:
    """Every server's state; the selected failed server's error and stderr tail."""
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE,
                        run_before=servers_screen("down"))


def long_winded_controls() -> ServerControls:
    """One remote server whose instructions are longer than the detail pane."""
    said = "\n".join(f"Rule {i}: read the notes index before writing note {i}." for i in range(30))
    statuses = [ServerStatus("notes", "connected", "http", 1, None, (), "2025-11-25",
                             "notes 2.0", 1, "closed", None, logs=("info: index loaded",),
                             instructions=said)]
    specs = {"notes": [ToolSpec("notes__add", "notes", "add", "Add a note.")]}
    stats = {"servers": {"notes": {"calls": 3, "errors": 0, "timeouts": 0, "bytes": 120,
                                   "p50_ms": 4.0, "p95_ms": 9.0, "restarts": 1,
                                   "breaker_trips": 0, "tools": {}}}}

    async def nothing(name: str) -> None:
        return None

    return ServerControls(lambda: statuses, lambda s: specs.get(s, []), Policy({}),
                          lambda name: None, nothing, nothing, lambda: stats,
                          login_status=lambda name: "logged in as me until 2026-12-01 10:00")


def test_servers_screen_long_instructions(snap_compare: Snap, tmp_path: Path) -> None:
    """At 80x24 a server's state and login line show above its long instructions, in a
    pane that scrolls (its scrollbar shows there is more)."""
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.app.push_screen(ServersScreen(long_winded_controls()))
        await pilot.pause(0.2)

    assert snap_compare(app_for(tmp_path), terminal_size=(80, 24), run_before=before)


def test_servers_screen_tool_approvals(snap_compare: Snap, tmp_path: Path) -> None:
    """A connected server's tools with their approval: auto, ask, not allowed."""
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE, run_before=servers_screen())
