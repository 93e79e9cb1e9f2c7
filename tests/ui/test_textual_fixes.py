"""Textual's repeating timer, once it falls behind, ticks again at the next interval
(``textual_fixes.py``), not one interval later: the screen's update timer is one."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual import _time, events, timer
from textual.app import App
from textual.timer import Timer

from tests.ui.kit import until
from tui_agent.ui import textual_fixes

pytestmark = pytest.mark.anyio

INTERVAL = 0.2


class Ticks(App[None]):
    """Its first tick stalls the event loop for two and a half intervals."""

    def __init__(self) -> None:
        super().__init__()
        self.ticks: list[float] = []
        self.stalled_until = 0.0

    def on_mount(self) -> None:
        self.set_interval(INTERVAL, name="ticks")  # no callback: it posts Timer events

    async def on_timer(self, event: events.Timer) -> None:
        self.ticks.append(event.time)
        if len(self.ticks) == 1:
            time.sleep(2.5 * INTERVAL)  # the stall is the point
            self.stalled_until = _time.get_time()


async def test_a_timer_that_fell_behind_ticks_at_the_next_interval() -> None:
    """After the stall the late tick fires at once; the one after it is due at the next
    interval, half an interval after the stall ended (Textual's own loop scheduled it
    one and a half intervals after)."""
    assert textual_fixes.apply() or not textual_fixes.needed()
    app = Ticks()
    async with app.run_test() as pilot:
        await until(pilot, lambda: len(app.ticks) >= 3, timeout=10, what="three ticks")
    due = app.ticks[2] - app.stalled_until
    assert 0 < due < INTERVAL, f"the tick after the stall was due {due:.3f} s after it"


@pytest.mark.parametrize("source", ["fixed", "missing"])
def test_a_textual_without_the_extra_tick_is_left_alone(
        source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once Textual's loop no longer has the line (or its source cannot be read), its
    own loop stays."""
    module = tmp_path / "timer.py"
    if source == "fixed":
        upstream = Path(timer.__file__).read_text(encoding="utf-8")
        module.write_text(upstream.replace(textual_fixes.BUGGY, "count = next_count"),
                          encoding="utf-8")

    async def upstream_run(self: Timer) -> None:
        """Stands for Textual's own loop."""

    monkeypatch.setattr(timer, "__file__", str(module))
    monkeypatch.setattr(Timer, "_run", upstream_run)
    assert not textual_fixes.needed()
    assert not textual_fixes.apply()
    assert Timer._run is upstream_run
