"""Markdown lists whose items are one paragraph each, drawn by one widget.

Textual builds a list item out of four widgets (a row, the bullet, a column,
the paragraph), so a two-item list is nine. That is most of a model's reply,
and every frame lays out and draws each of them; while a reply streams, the
list that is growing is also taken down and mounted again on every fragment.
The lists here draw the markers and the items' text themselves (the hanging
indent included) when every item is a single paragraph, which is nearly always
in a model's replies, and take the new text in place as it streams in. Any
other list (an item with two paragraphs, a code block or a nested list) is
built by Textual as before; a nested list inside it is again one of these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.segment import Segment
from textual.app import ComposeResult
from textual.content import Content
from textual.css.styles import RulesMap
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets._markdown import (  # the block classes Markdown.BLOCKS names
    MarkdownBlock,
    MarkdownBulletList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownParagraph,
)

MARKER = "list--marker"


def _marker_css(name: str) -> str:
    return f"""
    {name} > .{MARKER} {{ color: $text-primary; }}
    {name}:light > .{MARKER} {{ color: $text-secondary; }}
    """


class Items(Visual):
    """List items as rows: each item's marker, then its text wrapped at the width left
    beside the widest marker (a hanging indent).

    The items' text is rendered as one Content, one item a line, so a selection
    runs across items the way it does across the lines of a paragraph.
    """

    def __init__(self, markers: Sequence[str], bodies: Sequence[Content]) -> None:
        self.markers = list(markers)
        self.bodies = list(bodies)
        self.indent = max((cell_len(marker) for marker in markers), default=0)
        self.text = Content("\n").join(self.bodies)

    def selected(self, selection: Selection) -> str:
        """The selected text, each item that is selected from its start led by its marker
        (as Textual's own list copies)."""
        starts, line = {}, 0
        for marker, body in zip(self.markers, self.bodies, strict=True):
            starts[line] = marker.strip()
            line += body.plain.count("\n") + 1
        first, from_start = (0, True) if selection.start is None else \
            (selection.start.y, selection.start.x == 0)
        lines = selection.extract(self.text.plain).split("\n")
        return "\n".join(
            f"{starts[first + n]} {text}" if first + n in starts and (n or from_start) else text
            for n, text in enumerate(lines))

    def _rows(self, rules: RulesMap, width: int) -> list[int]:
        """Rows each item takes; an empty one ("- " before its text arrives) takes none,
        as in Textual's lists."""
        return [body.get_height(rules, width) if body else 0 for body in self.bodies]

    def render_strips(self, width: int, height: int | None, style: Style,
                      options: RenderOptions) -> list[Strip]:
        inner = max(width - self.indent, 1)
        lines = self.text.render_strips(inner, None, style, options)
        marker_style = (style + options.get_style(f".{MARKER}")).rich_style
        blank = style.rich_style
        strips: list[Strip] = []
        at = 0
        for marker, rows in zip(self.markers, self._rows(options.rules, inner), strict=True):
            for row in range(rows):
                lead = Segment(marker + " " * (self.indent - cell_len(marker)), marker_style) \
                    if row == 0 else Segment(" " * self.indent, blank)
                line = lines[at + row] if at + row < len(lines) else Strip.blank(inner, blank)
                strips.append(Strip.join([Strip([lead], self.indent), line]))
            at += max(rows, 1)  # an empty item is still a (blank) line of the text
        return strips if height is None else strips[:height]

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        widest = max((body.get_optimal_width(rules, container_width) for body in self.bodies),
                     default=0)
        return self.indent + widest

    def get_height(self, rules: RulesMap, width: int) -> int:
        return sum(self._rows(rules, max(width - self.indent, 1)))


def _bodies(block: MarkdownBlock) -> list[Content] | None:
    """The text of each item of a list block (not yet composed), or None when an item
    holds anything but one paragraph."""
    bodies: list[Content] = []
    for item in block._blocks:
        if not isinstance(item, MarkdownListItem):
            return None
        if not item._blocks:  # "- " with nothing after it yet, mid-stream
            bodies.append(Content(""))
        elif len(item._blocks) == 1 and isinstance(item._blocks[0], MarkdownParagraph):
            bodies.append(item._blocks[0]._content)
        else:
            return None
    return bodies


# Textual takes a widget's default CSS from its first widget base alone, so what the two
# lists share is a mixin, listed first, that is no widget (mypy sees the block it mixes in).
if TYPE_CHECKING:
    _Block = MarkdownBlock
else:
    _Block = object


class FlatList(_Block):
    """What the bullet and the numbered list share: drawn flat when they can be."""

    def _markers(self, items: Sequence[MarkdownListItem]) -> list[str]:
        raise NotImplementedError

    def _flat(self, block: MarkdownBlock) -> Items | None:
        bodies = _bodies(block)
        if not bodies:
            return None
        items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
        return Items(self._markers(items), bodies)

    def compose(self) -> ComposeResult:
        """Draw this list flat if it can be (then it has no children), else as Textual
        does."""
        items = self._flat(self)
        if items is None:
            return super().compose()
        self._blocks.clear()
        self.update(items)
        return iter(())

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        """The list grew while streaming: take the new text in place (no await, so no
        frame can see the list half-replaced) when both are flat."""
        items = self._flat(block) if type(block) is type(self) else None
        if items is None or not isinstance(self.visual, Items):
            await super()._update_from_block(block)
            return
        self._copy_context(block)
        self.update(items)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        visual = self.visual
        if not isinstance(visual, Items):
            return super().get_selection(selection)
        return visual.selected(selection), "\n"


class BulletList(FlatList, MarkdownBulletList):
    COMPONENT_CLASSES = MarkdownBulletList.COMPONENT_CLASSES | {MARKER}
    DEFAULT_CSS = _marker_css("BulletList")

    def _markers(self, items: Sequence[MarkdownListItem]) -> list[str]:
        return [item.bullet for item in items]


class OrderedList(FlatList, MarkdownOrderedList):
    COMPONENT_CLASSES = MarkdownOrderedList.COMPONENT_CLASSES | {MARKER}
    DEFAULT_CSS = _marker_css("OrderedList")

    def _markers(self, items: Sequence[MarkdownListItem]) -> list[str]:
        """``1. `` and on from the first item's number, right-aligned as Textual does."""
        try:
            start = int(items[0].bullet)
        except (IndexError, ValueError):
            start = 1
        numbers = [f"{number}. " for number in range(start, start + len(items))]
        width = max(len(number) for number in numbers) + 1
        return [number.rjust(width) for number in numbers]
