"""What the transcript is made of: the user's messages, the model's replies (Markdown,
streamed), and one-line notes.

Every string here is untrusted (model text, tool output, server names): it is
passed through :func:`~tui_agent.tools.text.clean` and shown as plain
``Content``, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt
from textual.binding import Binding
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownFence, MarkdownStream

from tui_agent.tools.text import StreamCleaner, clean
from tui_agent.ui.widgets.md_lists import BulletList, OrderedList


def plain(text: str) -> Content:
    """Untrusted text as inert content: no control characters, no markup."""
    return Content(clean(text))


def key_hints(keys: list[tuple[str, str]], *, compact: bool = False) -> Content:
    """``y approve once   n deny ...``: each key shown as a reversed cap, then what it does.
    The one look of keys in every modal. ``compact``: the caps unpadded, two spaces
    between and none after, for a legend that shares its row (a form's, beside its
    buttons: it fits on one line in 80 columns)."""
    parts: list[str | tuple[str, str]] = []
    for key, what in keys:
        if compact:
            parts += ["  " if parts else "", (key, "reverse bold"), f" {what}"]
        else:
            parts += [(f" {key} ", "reverse bold"), f" {what}   "]
    return Content.assemble(*parts)


class UserMessage(Static, can_focus=True):
    """What the user sent, with a chip for each file and image that went with it.
    Focused (a click, or alt+up), ``c`` copies it."""

    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: outer $primary;
        background: $boost;
        color: $foreground;
    }
    UserMessage:focus { background: $primary-muted; }
    """
    BINDINGS = [Binding("c", "copy", "Copy")]

    def __init__(self, text: str, chips: Sequence[str] = ()) -> None:
        self.text = text
        super().__init__(with_chips(plain(text), chips))

    def action_copy(self) -> None:
        copy_out(self, self.text, "your message")


def with_chips(text: Content, chips: Sequence[str], *, below: bool = True) -> Content:
    """``text``, then a row of chips (``file a.py · 1.2 KB``), each shown as a tag."""
    if not chips:
        return text
    parts: list[Content | tuple[str, str] | str] = [text, "\n" if below else " "]
    for chip in chips:
        parts += [(f" {clean(chip)} ", "$text-secondary on $secondary-muted"), " "]
    return Content.assemble(*parts)


def copy_out(widget: Widget, text: str, what: str) -> None:
    """Put ``text`` on the clipboard (OSC 52: it works over SSH) and say what went."""
    widget.app.copy_to_clipboard(text)
    lines = text.count("\n") + 1
    widget.app.notify(f"copied {what} ({lines} line{'s' if lines != 1 else ''}, "
                      f"{len(text):,} characters)", title="clipboard", markup=False)


def literal_html_parser() -> MarkdownIt:
    """Textual's "gfm-like" parser with raw HTML off: ``Vec<u8>``, ``<details>`` or a
    quoted ``<module>`` stay on screen as the text the model wrote. With HTML on (the
    preset's default) markdown-it makes such text an HTML token, which a terminal widget
    has nothing to draw for, and it vanished. Autolinks (``<https://...>``) and code spans
    are not HTML and read as before."""
    return MarkdownIt("gfm-like", {"html": False})


class CodeBlock(MarkdownFence, can_focus=True):
    """A code block of a reply: focused (a click, or alt+up), ``c`` copies its code."""

    DEFAULT_CSS = "CodeBlock:focus { background: $accent-muted; }"
    BINDINGS = [Binding("c", "copy", "Copy the code")]

    def action_copy(self) -> None:
        copy_out(self, self.code, "the code block")


class AssistantMessage(Markdown, can_focus=True):
    """A reply. Streamed through Textual's ``MarkdownStream``, which coalesces fragments
    when rendering falls behind, so a fast stream never queues up work. Focused, ``c``
    copies it (as Markdown)."""

    DEFAULT_CSS = """
    AssistantMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        background: transparent;
    }
    AssistantMessage.-incomplete { border-left: outer $warning; }
    AssistantMessage:focus { background: $boost; }
    """
    BLOCKS = {**Markdown.BLOCKS, "bullet_list_open": BulletList,
              "ordered_list_open": OrderedList, "fence": CodeBlock, "code_block": CodeBlock}
    BINDINGS = [Binding("c", "copy", "Copy the reply")]

    def action_copy(self) -> None:
        copy_out(self, self.source, "the reply")

    def __init__(self, text: str = "") -> None:
        # Links from a model are not opened on a click: the URL could be anything.
        super().__init__(clean(text), open_links=False, parser_factory=literal_html_parser)
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


class PlanMessage(AssistantMessage):
    """The plan: the last reply of a turn taken in plan mode, shown again, framed, when the
    person leaves plan mode (:mod:`tui_agent.ui.modes`)."""

    DEFAULT_CSS = """
    PlanMessage {
        border: round $accent; border-title-color: $accent; border-title-style: bold;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.border_title = "the plan"


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
