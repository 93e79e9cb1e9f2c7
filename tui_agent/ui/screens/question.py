"""What the approval modal and the project question share: a dialog framed in the
warning colour, a title, why it asks, a scrolling body (focused, so the keys scroll
it) and a row of keys. Each subclass composes ``#dialog`` with those parts."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen
from textual.widget import Widget

Answer = TypeVar("Answer")


class Question(ModalScreen[Answer]):
    DEFAULT_CSS = """
    Question { align: center middle; background: $background 60%; }
    Question #dialog {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    Question .title { text-style: bold; color: $foreground; margin: 0 0 1 0; }
    Question .why { color: $text-muted; }
    Question #body { height: auto; max-height: 20; margin: 1 0; background: $panel; }
    Question .keys { color: $text-muted; }
    """

    def on_mount(self) -> None:
        self.opening_focus().focus()

    def opening_focus(self) -> Widget:
        """What has the focus when the question opens: the body, so the keys scroll it. A
        form gives its first field instead. (Override this, not ``on_mount``: Textual runs
        every class's ``on_mount``, this one last, and it would take the focus back.)"""
        return self.query_one("#body")
