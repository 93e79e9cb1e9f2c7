"""The ``/`` completion menu: opens above the prompt while its only word is a ``/command``
being typed, narrows as the person types, and never takes the focus or a key the prompt
does not give it. The prompt (:class:`~tui_agent.ui.widgets.prompt.PromptInput`) drives
it: ``up``/``down`` move, ``tab``/``enter`` complete, ``esc`` closes; a click completes
too (:class:`CommandMenu.Chosen`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from tui_agent.ui.commands import MenuEntry


NAME_COLUMN = 30
"""The most cells the ``/name hint`` column takes (a longer one pushes its line along)."""


class CommandMenu(OptionList):
    """The candidates for the ``/command`` being typed."""

    DEFAULT_CSS = """
    CommandMenu {
        display: none;
        height: auto;
        max-height: 8;
        margin: 0 1;
        padding: 0 1;
        border: none;
        background: $surface;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    CommandMenu > .option-list--option-highlighted { text-style: none; }
    """
    can_focus = False

    class Chosen(Message):
        """An entry was clicked: the prompt completes it."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[MenuEntry] = []

    @property
    def is_open(self) -> bool:
        return self.display and bool(self.entries)

    def show(self, entries: list[MenuEntry]) -> None:
        """Offer ``entries`` (none: close), the first highlighted."""
        if [e.name for e in entries] == [e.name for e in self.entries] and self.display:
            return
        self.entries = list(entries)
        self.clear_options()
        if not entries:
            self.display = False
            return
        width = min(max(len(e.name) + (len(e.hint) + 1 if e.hint else 0) for e in entries) + 3,
                    NAME_COLUMN)
        self.add_options([Option(_line(e, width), id=str(i)) for i, e in enumerate(entries)])
        self.highlighted = 0
        self.display = True

    def close(self) -> None:
        self.show([])

    def move(self, step: int) -> None:
        """Highlight the entry ``step`` away (wrapping round)."""
        if self.entries:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.entries)

    def current(self) -> MenuEntry | None:
        if not self.is_open or self.highlighted is None:
            return None
        return self.entries[self.highlighted]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Chosen(self.entries[event.option_index].name))


def _line(entry: MenuEntry, width: int) -> Content:
    """``/name hint`` in a column of ``width``, then what it does and where it is from
    (all plain text: a file's or server's words are never markup)."""
    head = Content.assemble((f"/{entry.name}", "bold"),
                            (f" {entry.hint}" if entry.hint else "", "dim"))
    pad = " " * max(width - len(head.plain), 2)
    kind = f" ({entry.kind})" if entry.kind else ""
    return Content.assemble(head, pad, entry.about.splitlines()[0] if entry.about else "",
                            (kind, "italic dim"))
