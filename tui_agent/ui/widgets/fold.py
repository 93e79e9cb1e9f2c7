"""Folding: what has scrolled well above the view is taken out of the layout.

Textual lays out every widget of a screen whenever one of them changes, those
scrolled out of view too. Markdown is a widget or more a block (a code block is
two; ``md_lists.py`` keeps most lists to one), so a long reply made every frame of
a stream cost in proportion to the whole conversation. While the view follows
the bottom, the children of the transcript above a line, and the blocks of a
reply that straddles it, are hidden (``display: none``) and one :class:`Folded`
stand-in of exactly their height takes their place: nothing on screen moves by a
row, and a frame costs what the visible part costs. Everything unfolds at once
whenever the view moves up (the user scrolls, or what is below shrinks) or the
width changes (heights then differ), and folds again once the view is back at
the bottom.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget


class Folded(Widget):
    """Stands in for the children folded above it: as tall as they were, draws nothing."""

    DEFAULT_CSS = "Folded { height: 0; margin: 0; padding: 0; }"

    def render(self) -> str:
        return ""


class Folder:
    """Folds the children of ``view`` (a scrolling container) and, through ``deep``, the
    children of the one child that straddles the line."""

    def __init__(self, view: Widget, deep: Callable[[Widget], bool]) -> None:
        self.view = view
        self.deep = deep
        self.hidden: list[Widget] = []
        self.line = 0
        """Everything hidden ends above this row of the view's content; the view may
        scroll up to it without showing a stand-in."""
        self._spacers: dict[int, Folded] = {}
        self._generation = 0

    @property
    def folded(self) -> bool:
        return bool(self.hidden)

    def reset(self) -> None:
        """The view's children were removed (and the stand-ins with them)."""
        self.hidden.clear()
        self.line = 0
        self._spacers.clear()
        self._generation += 1

    async def fold(self, line: int) -> None:
        """Hide what ends above ``line`` (a row of the view's content). The last child of
        a container is never hidden: it is where the stream goes."""
        generation, before = self._generation, len(self.hidden)
        container: Widget = self.view
        top_line = line
        while line > 0:
            kids = [c for c in container.children if c.display and not isinstance(c, Folded)]
            above: list[Widget] = []
            for kid in kids[:-1]:
                if kid.virtual_region.bottom + kid.styles.margin.bottom > line:
                    break
                above.append(kid)
            if len(above) == len(kids):
                break
            first = kids[len(above)]
            if above and not await self._hide(container, above, first, generation):
                break
            if not self.deep(first):
                break
            top = first.virtual_region.y + first.styles.gutter.top
            if top >= line:
                break
            container, line = first, line - top
        if len(self.hidden) > before:
            self.line = top_line

    def shows_folded(self, top: float) -> bool:
        """Whether a view whose first row is ``top`` would show a stand-in."""
        return self.folded and top < self.line

    async def _hide(self, container: Widget, above: list[Widget], first: Widget,
                    generation: int) -> bool:
        spacer = self._spacers.get(id(container))
        if spacer is None or spacer.parent is not container:
            spacer = self._spacers[id(container)] = Folded()
            await container.mount(spacer, before=0)  # 0 rows tall: nothing moves
            if generation != self._generation:  # unfolded meanwhile
                return False
        # ``first`` keeps its place: its top, less its own margin (it collapses with
        # the stand-in's none), is the stand-in's height.
        height = max(first.virtual_region.y - first.styles.margin.top, 0)
        for widget in above:
            widget.display = False
        self.hidden.extend(above)
        spacer.styles.height = height
        spacer.display = True
        return True

    def unfold(self) -> None:
        """Show everything again, where it was."""
        self._generation += 1
        for widget in self.hidden:
            widget.display = True
        self.hidden.clear()
        self.line = 0
        for spacer in self._spacers.values():
            spacer.display = False
            spacer.styles.height = 0
