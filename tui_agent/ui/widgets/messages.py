"""What the transcript is made of: the user's messages, the model's replies (Markdown,
streamed), and one-line notes.

Every string here is untrusted (model text, tool output, server names): it is
passed through :func:`~tui_agent.tools.text.clean` and shown as plain
``Content``, never parsed as markup.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from tui_agent.tools.text import StreamCleaner, clean
from tui_agent.ui.widgets.md_lists import BulletList, OrderedList


def plain(text: str) -> Content:
    """Untrusted text as inert content: no control characters, no markup."""
    return Content(clean(text))


def key_hints(keys: list[tuple[str, str]]) -> Content:
    """``y approve once   n deny ...``: each key shown as a reversed cap, then what it does."""
    parts: list[str | tuple[str, str]] = []
    for key, what in keys:
        parts += [(f" {key} ", "reverse bold"), f" {what}   "]
    return Content.assemble(*parts)


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: outer $primary;
        background: $boost;
        color: $foreground;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(plain(text))


class AssistantMessage(Markdown):
    """A reply. Streamed through Textual's ``MarkdownStream``, which coalesces fragments
    when rendering falls behind, so a fast stream never queues up work."""

    DEFAULT_CSS = """
    AssistantMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        background: transparent;
    }
    AssistantMessage.-incomplete { border-left: outer $warning; }
    """
    BLOCKS = {**Markdown.BLOCKS, "bullet_list_open": BulletList,
              "ordered_list_open": OrderedList}

    def __init__(self, text: str = "") -> None:
        # Links from a model are not opened on a click: the URL could be anything.
        super().__init__(clean(text), open_links=False)
        self._stream: MarkdownStream | None = None
        self._cleaner = StreamCleaner()

    async def add(self, delta: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(self._cleaner.feed(delta))

    async def finish(self, *, incomplete: bool = False) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.write(self._cleaner.flush())
            await stream.stop()
        self.set_class(incomplete, "-incomplete")


class Note(Static):
    """A notice, a retry, or an error, on one line of its own."""

    DEFAULT_CSS = """
    Note { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    Note.-error { color: $error; }
    Note.-warning { color: $warning; }
    """

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(plain(text), classes=f"-{kind}")


class CompactedMarker(Static):
    """Where the conversation was compacted: every message above stays on screen and on
    disk; the model reads the older ones as a summary from here on."""

    DEFAULT_CSS = """
    CompactedMarker {
        margin: 1 0 0 0;
        padding: 0 1;
        border-top: dashed $secondary;
        color: $secondary;
        text-style: italic;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(plain(f"compacted here · {text}"))
