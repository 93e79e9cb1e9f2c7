"""Long replies stay cheap to stream. Folding (``fold.py``): what scrolled far above the
view leaves the layout while the view follows the stream; nothing on screen moves when
it does, and scrolling up or another width brings it all back. Full garbage collections
wait for the reply to end (``gcpause.py``). A reply the token limit cut says so."""

from __future__ import annotations

import gc
import html
import re
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import (
    SIZE,
    finish,
    laid_out,
    make_app,
    noted,
    ready,
    steady_cursor,
    stream_reply,
    turn,
    until,
    write_config,
)
from tui_agent.core.events import TextDelta, TurnDone, Usage
from tui_agent.ui.app import AgentApp
from tui_agent.ui.gcpause import HELD
from tui_agent.ui.widgets import transcript as transcript_module
from tui_agent.ui.widgets.fold import Folded
from tui_agent.ui.widgets.messages import AssistantMessage, Note
from tui_agent.ui.widgets.prompt import PromptInput

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """The transcript folds only when a test calls ``_fold``."""
    monkeypatch.setattr(transcript_module, "FOLD_EVERY", 3600)

STEP = """\
## Step {i}

- read `src/module_{i}.py` and list its **public** functions
- run the tests, then compare the numbers

```python
def step_{i}(values: list[int]) -> int:
    return sum(values) * {i}
```

Paragraph {i} says what the step found, at some length, so that it wraps on a narrow
terminal and takes more than one row.

"""


def screenshot(app: AgentApp) -> str:
    """The screen as SVG, less the id Textual derives from the moment it was taken."""
    return re.sub(r"terminal-\d+", "terminal", app.export_screenshot())


def screen_text(app: AgentApp) -> str:
    """The characters on screen (the SVG's text, spans joined)."""
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]+>", "", svg[svg.index("<g class"):])).replace("\xa0", " ")


def on_screen(app: AgentApp) -> dict[int, Any]:
    """Where each widget inside the transcript's view is, by identity."""
    view = app.transcript.region
    return {id(w): w.region for w in laid_out(app.transcript)
            if not isinstance(w, Folded) and w.region.overlaps(view)}


async def stream(pilot: Pilot[Any], app: AgentApp, steps: int) -> str:
    steady_cursor(app.chat.query_one(PromptInput))  # screenshots are compared
    text = "".join(STEP.format(i=i) for i in range(steps))
    await stream_reply(pilot, app, text, 40)
    await pilot.pause()
    return text


async def test_folding_moves_nothing_on_screen(by_hand: None) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await stream(pilot, app, 30)
        transcript = app.transcript
        before_count = len(laid_out(transcript))
        before, shot = on_screen(app), screenshot(app)
        await transcript._fold()
        await pilot.pause()
        assert transcript.folder.folded
        assert len(laid_out(transcript)) < before_count / 3
        assert on_screen(app) == before
        assert screenshot(app) == shot
        # the view still follows: more text lands at the bottom, in view
        await transcript.show(TextDelta("Epilogue"))
        await transcript.show(TurnDone(Usage()))
        await until(pilot, lambda: "Epilogue" in screen_text(app),
                    what="the new line on screen")


async def test_a_long_stream_folds_as_it_goes() -> None:
    """The timer folds while the reply streams; the reply ends up whole."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        text = await stream(pilot, app, 30)
        await until(pilot, lambda: app.transcript.folder.folded, what="a fold")
        assert app.transcript.query_one(AssistantMessage).source == text
        assert "Paragraph 29 says" in screen_text(app)


async def test_scrolling_up_unfolds_where_the_text_was(by_hand: None) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await stream(pilot, app, 30)
        transcript = app.transcript
        await transcript._fold()
        await pilot.pause()
        hidden = list(transcript.folder.hidden)
        height = transcript.virtual_size.height
        assert hidden
        transcript.scroll_relative(y=-2, animate=False)  # within the rows kept unfolded
        await pilot.pause()
        assert transcript.folder.folded
        view = transcript.region
        assert not [f for f in transcript.query(Folded) if f.display and f.region.overlaps(view)]
        transcript.scroll_page_up(animate=False)
        await pilot.pause()
        assert not transcript.folder.folded
        assert all(w.display for w in hidden)
        assert transcript.virtual_size.height == height
        transcript.scroll_home(animate=False)
        await pilot.pause()
        assert "Welcome" in screen_text(app)  # the first-run note, folded at the top
        transcript.scroll_to_widget(transcript.query_one(AssistantMessage), top=True,
                            animate=False)
        await pilot.pause()
        assert "Step 0" in screen_text(app)
        # back at the bottom, it folds again
        transcript.scroll_end(animate=False)
        await pilot.pause()
        await transcript._fold()
        assert transcript.folder.folded


async def test_shrinking_below_unfolds(by_hand: None) -> None:
    """What is below the view shrinks (a long note goes): the anchored view moves up, and
    no stand-in may be left in sight."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await stream(pilot, app, 30)
        transcript = app.transcript
        await transcript.note("\n".join(f"line {i}" for i in range(40)))
        await pilot.pause()
        await transcript._fold()
        await pilot.pause()
        assert transcript.folder.folded
        await transcript.query(Note).last().remove()
        await pilot.pause()
        view = transcript.region
        assert not [f for f in transcript.query(Folded) if f.display and f.region.overlaps(view)]
        assert "Paragraph 29 says" in screen_text(app)


@pytest.mark.parametrize("size", [(60, SIZE[1]), (SIZE[0], 60)], ids=["narrower", "taller"])
async def test_another_size_unfolds(by_hand: None, size: tuple[int, int]) -> None:
    """Narrower: the folded text would wrap to other heights. Taller: the view reaches
    above the fold line."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await stream(pilot, app, 30)
        await app.transcript._fold()
        await pilot.pause()
        hidden = list(app.transcript.folder.hidden)
        assert hidden
        await pilot.resize_terminal(*size)
        await pilot.pause()
        assert not app.transcript.folder.folded and all(w.display for w in hidden)
        app.transcript.scroll_home(animate=False)
        await pilot.pause()
        assert "Welcome to tui-agent" in screen_text(app)


async def test_full_collections_wait_for_the_reply_to_end(by_hand: None) -> None:
    full: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    app = make_app()
    before = gc.get_threshold()
    gc.callbacks.append(count)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await app.transcript.user("go")
            await app.transcript.show(TextDelta("a reply, streaming"))
            assert gc.get_threshold() == (*before[:2], HELD)
            await app.transcript.show(TurnDone(Usage()))
            assert gc.get_threshold() == before
            full.clear()
            await until(pilot, lambda: full, what="the full collection after the reply")
            await app.transcript.show(TextDelta("another reply"))  # held again, until
        assert gc.get_threshold() == before  # the app ended
    finally:
        gc.callbacks.remove(count)


async def test_a_reply_cut_by_the_token_limit_says_so(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="The first half of", finish_reason="length"))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                                extra="max_tokens = 300\n"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await turn(pilot, app, "a long story")
        note = await noted(pilot, app, "output-token limit")
        assert "[model] max_tokens = 300" in note and 'Say "go on"' in note
        assert "The first half of" in str(app.transcript.query(AssistantMessage).last().source)
        await finish(app)
