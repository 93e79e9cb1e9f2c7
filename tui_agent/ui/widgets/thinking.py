"""The model's thinking, shown apart from its reply: a dim block above it.

While the model thinks the block is folded and shows its last rows as they stream
(``∴ Thinking…``); once the reply (or a tool call, or the end of the turn) comes, it
says how long the thinking took and, when the provider counted them, its tokens
(``∴ Thought for 4.2 s · 812 tokens``). Enter (with the block focused) or a click
unfolds the whole text and folds it again, as a tool card's result does.

A reasoning model can stream thousands of pieces a second: :meth:`ThinkingBlock.add`
only appends, and the block repaints at most :data:`REPAINT_EVERY`. The text is
untrusted (the model's): control characters are removed as it streams
(:class:`~tui_agent.tools.text.StreamCleaner`) and it is shown as plain ``Content``,
never parsed as markup. :class:`Thoughts` is the transcript's bookkeeping of the turn's
blocks: which one streams, when it started, and how the turn's reasoning tokens are
shared among them once the turn is done.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

from tui_agent.tools.text import StreamCleaner, clean

if TYPE_CHECKING:
    from tui_agent.core.events import Usage

REPAINT_EVERY = 1 / 15
"""Seconds between two repaints of a block that streams (at most)."""
PREVIEW_ROWS = 2
"""Rows of the text a folded block shows while the model thinks."""


def preview(text: str, width: int, rows: int = PREVIEW_ROWS) -> list[str]:
    """The last ``rows`` rows ``text`` would take at ``width`` columns. Only its tail
    is wrapped, so this costs the same however long the text has grown."""
    width = max(width, 8)
    tail = text[-(rows + 1) * width * 2:]
    lines = [line for line in tail.splitlines() if line.strip()][-rows:]
    wrapped = [row for line in lines for row in textwrap.wrap(line, width)]
    return wrapped[-rows:]


def took(seconds: float | None, tokens: int | None, *, rough: bool = False) -> str:
    """`` for 4.2 s · 812 tokens``: what is known of a finished thinking."""
    parts = [f" for {seconds:.1f} s" if seconds is not None else ""]
    if tokens:
        parts.append(f" · {'~' if rough else ''}{tokens:,} tokens")
    return "".join(parts)


class ThinkingBlock(Widget, can_focus=True):
    """One stretch of the model's thinking. Focused (a click, or alt+up), enter folds
    or unfolds it and ``c`` copies it."""

    DEFAULT_CSS = """
    ThinkingBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
        border-left: outer $panel-lighten-2;
    }
    ThinkingBlock:focus { background: $boost; }
    """
    BINDINGS = [Binding("enter", "fold", "Show/hide the thinking"),
                Binding("c", "copy", "Copy the thinking")]

    expanded: reactive[bool] = reactive(False, layout=True)
    """The whole text shown (else, while it streams, its last rows; once done, none)."""

    def __init__(self, text: str = "", *, streaming: bool = True,
                 tokens: int | None = None) -> None:
        super().__init__()
        self._parts: list[str] = [clean(text)] if text else []
        self._cleaner = StreamCleaner()
        self.streaming = streaming
        self.seconds: float | None = None
        self.tokens = tokens
        self.rough = False
        """``tokens`` is this block's share of a turn that thought more than once."""
        self._due = False

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def add(self, delta: str) -> None:
        """Another piece of the thinking (repainted with the next batch)."""
        piece = self._cleaner.feed(delta)
        if piece:
            self._parts.append(piece)
            self._soon()

    def _soon(self) -> None:
        if not self._due:
            self._due = True
            self.set_timer(REPAINT_EVERY, self._repaint)

    def _repaint(self) -> None:
        self._due = False
        self.refresh(layout=True)

    def finish(self, seconds: float | None) -> None:
        """The thinking is over: it took ``seconds`` (None: unknown)."""
        rest = self._cleaner.flush()
        if rest:
            self._parts.append(rest)
        self.streaming, self.seconds = False, seconds
        self.refresh(layout=True)

    def count(self, tokens: int | None, *, rough: bool = False) -> None:
        """Its tokens, as the provider reported them (``rough``: a share of the turn's)."""
        self.tokens, self.rough = tokens, rough
        self.refresh(layout=True)

    def head(self) -> str:
        if self.streaming:
            return "∴ Thinking…"
        return f"∴ Thought{took(self.seconds, self.tokens, rough=self.rough)}"

    def render(self) -> Content:
        marker = "▾" if self.expanded else "▸"
        head = Content.assemble((self.head(), "bold"), f"  {marker}")
        if self.expanded:
            body = self.text.strip("\n")
            return Content.assemble(head, "\n", (body, "italic")) if body else head
        if not self.streaming:
            return head
        width = self.content_size.width or max(self.app.size.width - 6, 8)
        rows = [Content(row).truncate(width, ellipsis=True) for row in preview(self.text, width)]
        return Content("\n").join([head, *(row.stylize("italic") for row in rows)])

    def watch_expanded(self) -> None:
        self.refresh(layout=True)

    def action_fold(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        event.stop()
        self.focus()
        self.action_fold()

    def action_copy(self) -> None:
        from tui_agent.ui.widgets.messages import copy_out  # Markdown: not on the first frame

        copy_out(self, self.text, "the thinking")


class Thoughts:
    """The transcript's thinking blocks of the turn in flight. ``clock``: seconds, for
    how long each took (a test may give its own)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.current: ThinkingBlock | None = None
        self._started = 0.0
        self._turn: list[ThinkingBlock] = []

    def start(self) -> ThinkingBlock:
        """A new block, for the transcript to mount: the model has begun to think."""
        self.end()
        self.current = ThinkingBlock()
        self._started = self.clock()
        self._turn.append(self.current)
        return self.current

    def end(self) -> None:
        """The thinking streaming now (if any) is over: something else came."""
        if self.current is not None:
            block, self.current = self.current, None
            block.finish(self.clock() - self._started)

    def settle(self, usage: Usage | None) -> None:
        """The turn is over (``usage``: its count; None, stopped): each of its blocks
        gets its tokens. One block takes them all; several share them by the length of
        their text, marked as a share (the provider counts per request, not per block)."""
        self.end()
        blocks, self._turn = self._turn, []
        if usage is None or not usage.reasoning_tokens or not blocks:
            return
        if len(blocks) == 1:
            blocks[0].count(usage.reasoning_tokens)
            return
        lengths = [len(b.text) for b in blocks]
        if not sum(lengths):
            lengths = [1] * len(blocks)
        for block, length in zip(blocks, lengths, strict=True):
            block.count(round(usage.reasoning_tokens * length / sum(lengths)), rough=True)


def thinking_of(message: dict[str, Any]) -> ThinkingBlock | None:
    """The folded block of a saved assistant message's thinking, if it kept any: litellm's
    ``reasoning_content``, else the text of Anthropic's ``thinking_blocks`` (a redacted
    block has none to show)."""
    text = message.get("reasoning_content")
    if not isinstance(text, str) or not text.strip():
        blocks = message.get("thinking_blocks")
        pieces = [b.get("thinking") for b in blocks if isinstance(b, dict)] \
            if isinstance(blocks, list) else []
        text = "\n\n".join(p for p in pieces if isinstance(p, str) and p.strip())
    return ThinkingBlock(text, streaming=False) if text.strip() else None
