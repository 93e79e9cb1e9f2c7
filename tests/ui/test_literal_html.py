"""Raw HTML in the model's text is shown as text, never taken as HTML and dropped: in a
reply streamed in pieces and in one that a resumed conversation shows again. The
snapshot of the same text is ``test_snapshots.py::test_a_reply_shows_text_in_angle_brackets``."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.ui.kit import SIZE, make_app, stream_reply, until, write_config
from tui_agent.config import paths
from tui_agent.core.session import SessionWriter
from tui_agent.ui.app import AgentApp
from tui_agent.ui.widgets.messages import AssistantMessage, Note

pytestmark = pytest.mark.anyio

REPLY = ("Use Vec<u8> or List<String>; the <details> tag and a <b>bold</b> word.\n\n"
         "<details>\n<summary>why</summary>\n\n"
         "- an item with <kbd>Ctrl</kbd>\n\n"
         '```\nFile "<module>", line 1\n```\n\n'
         "`<i>` in a code span\n")
SEEN = ["Use Vec<u8> or List<String>; the <details> tag and a <b>bold</b> word.",
        "<details>", "<summary>why</summary>", "an item with <kbd>Ctrl</kbd>",
        'File "<module>", line 1', "<i> in a code span"]


def screen_text(app: AgentApp) -> str:
    """The characters on screen (the SVG's text, spans joined)."""
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]+>", "", svg[svg.index("<g class"):])).replace("\xa0", " ")


def missing(app: AgentApp) -> list[str]:
    text = screen_text(app)
    return [line for line in SEEN if line not in text]


async def test_a_streamed_reply_keeps_its_angle_brackets(tmp_path: Path) -> None:
    app = make_app(write_config(tmp_path / "c.toml", model="openai/m"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.backend.ready.is_set)
        await stream_reply(pilot, app, REPLY, 5)
        await pilot.pause(0.1)
        assert missing(app) == []


async def test_a_resumed_reply_keeps_its_angle_brackets(tmp_path: Path) -> None:
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    writer = SessionWriter.create(store / "angles.jsonl", {"model": "x"})
    writer.message({"role": "user", "content": "which type?"})
    writer.message({"role": "assistant", "content": REPLY})
    writer.close()
    app = make_app(write_config(tmp_path / "c.toml", model="openai/m"), resume=writer.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any("resumed" in str(n.render())
                                       for n in app.transcript.query(Note)), what="the replay")
        await until(pilot, lambda: app.transcript.query(AssistantMessage), what="the reply")
        await pilot.pause(0.2)
        assert missing(app) == []
