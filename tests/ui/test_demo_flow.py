"""The offline demo (``tui-agent --demo``) as a new user meets it: the real app, the
scripted tour and the bundled notes server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.ui.kit import finish, ready, until
from tui_agent.config import Config, Settings
from tui_agent.demo import demo_settings
from tui_agent.demo.model import READ_PAUSE
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.widgets.messages import AssistantMessage
from tui_agent.wiring.runtime import Options

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

EXPLAINS = ("Now a tool call.", "Press y to let it run, n to refuse.")
"""The start and end of the paragraph that says what the approval modal will ask."""


def explanation_in_view(app: AgentApp) -> bool:
    """The paragraph that explains the coming call is rendered, whole, inside what the
    transcript shows."""
    view = app.transcript.content_region
    for reply in app.transcript.query(AssistantMessage):
        for block in reply.children:
            text = str(block.render()).strip()
            if text.startswith(EXPLAINS[0]) and text.endswith(EXPLAINS[1]):
                return bool(block.region.height) and view.contains_region(block.region)
    return False


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_demo_explains_its_call_before_the_approval_modal_covers_it(
        tmp_path: Path, size: tuple[int, int]) -> None:
    """The approval modal covers the chat: the text that explains it (what save_note
    will do, y and n) must have arrived and been on screen, whole, a while before."""
    app = AgentApp(Options(demo_settings(tmp_path / "notes", Settings(Config())), demo=True))
    loop = asyncio.get_running_loop()
    shown_at: list[float] = []

    def modal_open() -> bool:
        if not shown_at and app.screen is app.chat and explanation_in_view(app):
            shown_at.append(loop.time())
        return isinstance(app.screen, ApprovalScreen)

    async with app.run_test(size=size) as pilot:
        await ready(pilot, app)
        await pilot.press("enter")  # the demo's prompt holds "Show me around"
        await until(pilot, modal_open, timeout=60, what="the approval modal")
        opened_at = loop.time()
        assert shown_at, "the modal opened before its explanation was on screen"
        # Both moments are noticed by the same polling, late, never early. Noticing the
        # explanation late shrinks the measured gap, so a loaded machine errs toward
        # failing; noticing the modal late stretches it, but by one poll at most, against
        # a margin of half the pause.
        assert opened_at - shown_at[0] >= READ_PAUSE / 2, opened_at - shown_at[0]
        await pilot.press("n")
        await until(pilot, lambda: app.turns_ended == 1, timeout=60, what="the tour's turn")
        await finish(app)
