"""A tool card holds and shows a bounded preview of a big result (issue 33): nine 7 MB
results of one script made nine cards hold, clean and lay out every line of them."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Collapsible, Static

from tui_agent.ui.widgets.tool_card import PREVIEW_CHARS, ToolCard

pytestmark = pytest.mark.anyio

LINE = "0123456789" * 9 + "abcdefghi\n"


class OneCard(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolCard("c1", "calc", "big", {"size": 1})


async def shown(text: str) -> tuple[str, str]:
    """The text the card's result shows, and the title of its fold."""
    app = OneCard()
    async with app.run_test() as pilot:
        card = app.query_one(ToolCard)
        card.show_result(text, is_error=False)
        await pilot.pause()
        body = card.query_one(".result", Static)
        title = card.query_one(Collapsible).title
        return str(body.content), title


async def test_a_big_result_shows_its_start_and_says_how_much_is_left() -> None:
    text = (LINE * 80_000)[:7 << 20]  # 7 MB, its last line cut short
    body, title = await shown(text)
    assert len(body) < PREVIEW_CHARS + 100
    assert body.startswith(LINE * 3) and "\x1b" not in body
    assert body.endswith("abcdefghi\n… 7,320,033 more characters in 73,201 more lines "
                         "not shown")
    assert title == "result · 73,401 lines, 7,340,032 characters"


async def test_a_result_under_the_preview_shows_whole() -> None:
    text = LINE * 150 + "\x1b[2Jlast"
    body, title = await shown(text)
    assert body == (LINE * 150).rstrip("\n") + "\nlast"  # cleaned, as before
    assert title == "result · 151 lines, 15,008 characters"


async def test_a_big_result_of_carriage_returns_is_folded_and_its_lines_counted() -> None:
    """A progress bar's output ends its lines with "\\r" alone: the card folds it like any
    big result (it counted "\\n" only, found one line, and laid 20,000 characters out
    unfolded), and counts its lines as the small results' are counted."""
    text = "progress 1%\r" * 100_000
    body, title = await shown(text)
    assert title == "result · 100,000 lines, 1,200,000 characters"
    assert body.startswith("progress 1%\nprogress 1%\n")
    small = "a\rb\r\nc"
    assert (await shown(small * 2 + "\nd\ne"))[1] == "result · 7 lines, 16 characters"
