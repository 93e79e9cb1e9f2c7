"""SVG snapshots of the permission modes: the status bar in each mode (plan plainly, auto
in the warning colour, the default mode saying nothing) and the tool cards saying what
decided a call made without asking; leaving plan mode with the plan shown and the prompt
offering to carry it out. Built as tests/ui/test_snapshots.py builds its own: the real
app fed the core's events, the mode switched as shift+tab switches it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.ui.kit import steady_cursor
from tests.ui.test_snapshots import Before, Snap, app_for, settle, steady
from tui_agent.core.events import (
    ApprovalDecided,
    Event,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnDone,
    Usage,
)
from tui_agent.core.permissions.modes import PLAN_REFUSAL, Mode
from tui_agent.ui import modes
from tui_agent.ui.app import AgentApp
from tui_agent.ui.widgets.prompt import PromptInput

WIDE = (120, 40)
PLAN = "Plan:\n\n1. read `notes/today.md`\n2. append the list of **open tasks**\n3. commit"

PLANNING: list[Event] = [
    ToolCallStarted("r", "fs__read_file", "fs", "read_file", {"path": "notes/today.md"}),
    ApprovalDecided("r", "auto", by="the auto list of fs"),
    ToolResult("r", False, "# Today\n- ship the modes", 0.02),
    ToolCallStarted("w", "fs__write_file", "fs", "write_file",
                    {"path": "notes/today.md", "text": "# Today"}),
    ApprovalDecided("w", "denied", PLAN_REFUSAL, by="plan mode"),
    ToolResult("w", True, PLAN_REFUSAL),
    TextDelta(PLAN),
    TurnDone(Usage(120, 40, 160, 0.0004)),
]
CARRIED_OUT: list[Event] = [
    ToolCallStarted("w2", "fs__write_file", "fs", "write_file",
                    {"path": "notes/today.md", "text": "# Today\n- open tasks"}),
    ApprovalDecided("w2", "auto", by="auto mode"),
    ToolResult("w2", False, "wrote 2 lines", 0.03),
]


def in_mode(mode: Mode, events: Sequence[Event], *, planned: bool = False) -> Before:
    """The chat after ``events`` (a turn taken in plan mode first, with ``planned``), then
    switched to ``mode`` as shift+tab switches it."""
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, AgentApp)
        if planned:
            await modes.switch(app, "plan")
            await app.transcript.user("add the open tasks to today's notes")
            for event in PLANNING:
                await app.transcript.show(event)
            app.turns.plan = (app.backend.agent, PLAN)
        await modes.switch(app, mode)
        if events:
            await app.transcript.user("go on")
        for event in events:
            await app.transcript.show(event)
        steady_cursor(app.chat.query_one(PromptInput))
        await pilot.pause(0.2)
        await steady(pilot)
    return before


def test_plan_mode(snap_compare: Snap, tmp_path: Path) -> None:
    """Plan mode in the bar; a read-only call ran (``auto · the auto list of fs``), the
    write was refused without asking (``⊘ denied · plan mode``), the plan as the reply."""
    async def planning(pilot: Pilot[Any]) -> None:
        await in_mode("plan", [])(pilot)
        app = pilot.app
        assert isinstance(app, AgentApp)
        await app.transcript.user("add the open tasks to today's notes")
        for event in PLANNING:
            await app.transcript.show(event)
        await pilot.pause(0.2)
        await steady(pilot)

    assert snap_compare(app_for(tmp_path), terminal_size=WIDE, run_before=planning)


def test_leaving_plan_mode_into_auto_shows_the_plan(snap_compare: Snap, tmp_path: Path) -> None:
    """Auto mode in the bar in the warning colour; the plan framed, the prompt holding
    "Carry out the plan.", and the write that then ran saying ``auto · auto mode``."""
    assert snap_compare(app_for(tmp_path), terminal_size=WIDE,
                        run_before=in_mode("auto", CARRIED_OUT, planned=True))


def test_default_mode_says_nothing(snap_compare: Snap, tmp_path: Path) -> None:
    """Back in the default mode the bar starts with the model; the plan shown stays."""
    assert snap_compare(app_for(tmp_path), terminal_size=WIDE,
                        run_before=in_mode("default", [], planned=True))


def test_auto_mode_at_80_columns(snap_compare: Snap, tmp_path: Path) -> None:
    """At 80x24 the mode stays whole in the bar: the token count shortens first."""
    assert snap_compare(app_for(tmp_path), terminal_size=(80, 24),
                        run_before=in_mode("auto", CARRIED_OUT))
