"""SVG snapshots of sub-agents' cards: one running (its clock stopped at a fixed time,
the tool it calls now, its context so far) beside one that failed, and a finished one
unfolded to its transcript, focused (its keys shown). Built like
tests/ui/test_snapshots_tasks.py: the real app, no servers, the core's events fed in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.ui.test_agent_cards import done, started, working
from tests.ui.test_snapshots import Snap, app_for, feeding
from tui_agent.core.events import AgentFinished, AgentTag, TextDelta, Usage
from tui_agent.ui.app import AgentApp
from tui_agent.ui.widgets.agent_card import AgentCard

SIZE = (100, 40)


def frozen(at: float) -> Callable[[], float]:
    return lambda: at


def stopped_clocks(seconds: float) -> Any:
    """Every card's clock shows ``seconds`` since it started (no wall-clock time in a
    snapshot)."""
    async def then(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, AgentApp)
        for card in app.transcript.query(AgentCard):
            card.now = frozen(card.started + seconds)
            card.repaint()
    return then


def test_running_agent_cards(snap_compare: Snap, tmp_path: Path) -> None:
    """Two sub-agents of one reply: one calling a tool (its name, model, the task's first
    line, the tool, its context, 7 s), one that failed with its reason."""
    review = AgentTag("call_2", "review")
    events = [*started("call_1"), *started("call_2", "review", "openai/strong",
                                           "Review the diff for bugs."),
              *working("call_1"), TextDelta("Reading the diff.", agent=review),
              AgentFinished("call_2", "review", "failed", Usage(900, 40, 940, None), 3.2, 1,
                            (), "openai/strong: the model answered 401 (bad key)")]
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE,
                        run_before=feeding(events, stopped_clocks(7.0)))


async def unfold_first(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, AgentApp)
    card = app.transcript.query(AgentCard).first()
    card.focus()
    await pilot.press("enter")
    await pilot.pause(0.2)


def test_finished_agent_card_unfolded(snap_compare: Snap, tmp_path: Path) -> None:
    """A finished sub-agent, focused and unfolded: its totals, its keys, its replies and
    its tool call as a nested card."""
    events = [*started("call_1"), *working("call_1"), *done("call_1")]
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE,
                        run_before=feeding(events, unfold_first))
