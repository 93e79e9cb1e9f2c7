"""A resumed conversation's tool cards end as they did live: a code-mode script that
failed shows ``✗ failed`` with its nested ``⊘ denied`` call (and the call before it
``✓ done``), from the session file ``tui-agent run`` wrote. The file's side of the round
trip is ``tests/test_session_calls.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.fakes.llm_server import FakeLLM
from tests.test_session_calls import failed_script_session
from tests.ui.kit import make_app, steady_cursor, until, write_config
from tui_agent.config import paths
from tui_agent.ui.app import AgentApp
from tui_agent.ui.widgets.messages import Note
from tui_agent.ui.widgets.prompt import PromptInput
from tui_agent.ui.widgets.tool_card import ToolCard

pytestmark = pytest.mark.slow
SIZE = (100, 40)


def resumable(fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The failed script's session, where the app's ``--resume ID`` finds it."""
    session = failed_script_session(fake_llm, tmp_path)
    capsys.readouterr()
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    session.rename(store / "failed-script.jsonl")
    return "failed-script"


async def replayed(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, AgentApp)
    await until(pilot, lambda: any("resumed" in str(n.render())
                                   for n in app.transcript.query(Note)), what="the replay")
    await until(pilot, lambda: len(app.transcript.query(ToolCard)) == 3, what="nested cards")
    steady_cursor(app.chat.query_one(PromptInput))
    await pilot.pause(0.3)


def statuses(app: AgentApp) -> list[tuple[str, str, str]]:
    return [(c.call_id, c.status, str(c._label)) for c in app.transcript.query(ToolCard)]


@pytest.fixture
def saved_id(fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Written before the test's event loop runs (``tui-agent run`` runs one of its own)."""
    return resumable(fake_llm, tmp_path, capsys)


@pytest.mark.anyio
async def test_a_resumed_failed_script_shows_its_nested_denied_call(
        saved_id: str, tmp_path: Path) -> None:
    app = make_app(write_config(tmp_path / "app.toml", model="openai/m"), resume=saved_id)
    async with app.run_test(size=SIZE) as pilot:
        await replayed(pilot)
        shown = statuses(app)
        assert [s[:2] for s in shown] == [("s1", "failed"), ("s1.1", "done"),
                                          ("s1.2", "denied")]
        assert shown[0][2].startswith("✗ failed · ") and shown[1][2].startswith("✓ done · ")
        script, add, echo = app.transcript.query(ToolCard)
        assert add.parent is not None and echo in script.query(ToolCard)


def test_snapshot_of_a_resumed_failed_script(snap_compare: Any, fake_llm: FakeLLM,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The resumed script card: ✗ failed, its error, the add call ✓ done and the echo
    call ⊘ denied nested inside it (durations vary: the snapshot shows them blanked)."""
    app = make_app(write_config(tmp_path / "app.toml", model="openai/m"),
                   resume=resumable(fake_llm, tmp_path, capsys))

    async def before(pilot: Pilot[Any]) -> None:
        await replayed(pilot)
        for card in pilot.app.query(ToolCard):  # a duration differs from run to run
            if card.status in ("done", "failed"):
                card.set_status(card.status)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)
