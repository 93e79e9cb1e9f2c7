"""Lists of one-paragraph items are drawn by one widget (``md_lists.py``): they look
exactly as Textual's own lists do, stream in place, and copy with their markers."""

from __future__ import annotations

import re

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.geometry import Offset
from textual.selection import Selection
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence, MarkdownParagraph

from tui_agent.ui.widgets.md_lists import BulletList, Items, OrderedList
from tui_agent.ui.widgets.messages import AssistantMessage

pytestmark = pytest.mark.anyio

LISTS = """\
Intro with a paragraph.

- read `src/module.py` and list its **public** functions, an item long enough to wrap
- [a link](https://example.com) and *emphasis*
-

8. eight
9. nine, whose marker is as wide as ten's
10. ten

- outer item
  - nested a, itself a flat list inside Textual's own
  - nested b
- second outer item

1. an item with a code block

   ```python
   print("hello")
   ```
2. and one more

- line one\\
  line two after a hard break
- last
"""


class TextualLists(AssistantMessage):
    """The same reply widget with Textual's own list blocks, to compare with."""

    BLOCKS = Markdown.BLOCKS


class Show(App[None]):
    def __init__(self, reply: Markdown) -> None:
        super().__init__()
        self.reply = reply

    def compose(self) -> ComposeResult:
        yield self.reply


async def screenshot(reply: Markdown, theme: str, size: tuple[int, int] = (60, 50)) -> str:
    app = Show(reply)
    async with app.run_test(size=size) as pilot:
        app.theme = theme
        await pilot.pause()
        return re.sub(r"terminal-\d+", "terminal", app.export_screenshot())


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
@pytest.mark.parametrize("width", [60, 24])
async def test_lists_look_exactly_as_textuals_own(theme: str, width: int) -> None:
    """Markers, their colour in a dark and a light theme, ordered numbers right-aligned
    from the first item's, wrapping with a hanging indent, nested lists, an item with a
    code block and a hard break: the screen is the same, cell for cell."""
    ours = await screenshot(AssistantMessage(LISTS), theme, (width, 60))
    textuals = await screenshot(TextualLists(LISTS), theme, (width, 60))
    assert ours == textuals


async def test_a_list_of_one_paragraph_items_is_one_widget() -> None:
    app = Show(AssistantMessage(LISTS))
    async with app.run_test(size=(60, 50)) as pilot:
        await pilot.pause()
        lists = list(app.query(BulletList)) + list(app.query(OrderedList))
        flat = [block for block in lists if isinstance(block.visual, Items)]
        built = [block for block in lists if not isinstance(block.visual, Items)]
        # The first two lists, the nested one and the last are flat; the list holding
        # a nested list and the one holding a code block are Textual's.
        assert len(flat) == 4 and all(not block.children for block in flat)
        assert len(built) == 2 and all(block.query(MarkdownParagraph) for block in built)
        assert built[1].query(MarkdownFence)
        first = app.query_one(BulletList)
        assert isinstance(first.visual, Items)
        assert first.visual.markers == ["• ", "• ", "• "]
        ordered = app.query_one(OrderedList)
        assert isinstance(ordered.visual, Items)
        assert ordered.visual.markers == ["  8. ", "  9. ", " 10. "]


async def stream_into(reply: AssistantMessage, text: str, size: int,
                      seen: list[list[MarkdownBlock]]) -> None:
    for start in range(0, len(text), size):
        await reply.add(text[start:start + size])
        seen.append([w for w in reply.children if isinstance(w, MarkdownBlock)])
    await reply.finish()


async def test_a_streamed_list_grows_in_place_and_ends_as_if_shown_whole() -> None:
    """While a flat list streams it stays the same widget (Textual would take it down
    and mount it again on every fragment); a list that stops being flat (an item grows a
    code block) is rebuilt; the end is what the whole text shows at once."""
    streamed = AssistantMessage()
    app = Show(streamed)
    seen: list[list[MarkdownBlock]] = []
    async with app.run_test(size=(60, 50)) as pilot:
        await stream_into(streamed, LISTS, 3, seen)
        await pilot.pause()
        assert streamed.source == LISTS
        appeared = next(n for n, blocks in enumerate(seen)
                        if any(isinstance(block, BulletList) for block in blocks))
        first_list = next(block for block in seen[appeared] if isinstance(block, BulletList))
        # From its first fragment to the end, the first list is the same widget.
        assert all(first_list in blocks for blocks in seen[appeared:])
        assert len(seen) - appeared > 20
        app.theme = "textual-dark"
        await pilot.pause()
        end = re.sub(r"terminal-\d+", "terminal", app.export_screenshot())
    assert end == await screenshot(AssistantMessage(LISTS), "textual-dark")


def test_a_selection_copies_the_items_with_their_markers() -> None:
    items = Items(["• ", "• "], [Content("first item"), Content("second\nwith a break")])
    assert items.selected(Selection(None, None)) == "• first item\n• second\nwith a break"
    # From inside the first item to inside the second: no marker for the first.
    part = Selection(Offset(6, 0), Offset(3, 1))
    assert items.selected(part) == "item\n• sec"
    assert items.selected(Selection(Offset(0, 2), None)) == "with a break"
