"""The conversation on screen: it renders the core's events and a resumed history.

The view is anchored: it follows the stream to the bottom until the user scrolls
up, and follows again once they scroll back down. While it follows, what has
scrolled well above is folded out of the layout (``fold.py``), so a frame costs
what the screen shows, however long the conversation. A long resumed
conversation shows its last messages at once and the earlier ones on demand, so
opening a 2,000-message session costs about what opening an empty one does.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget

from tui_agent.ui.gcpause import FullCollections
from tui_agent.ui.widgets.agents import Agents
from tui_agent.ui.widgets.fold import Folded, Folder
from tui_agent.ui.widgets.history import PAGE, first_shown, marker_text, page_start
from tui_agent.ui.widgets.thinking import Thoughts

if TYPE_CHECKING:  # Markdown (markdown-it) loads with the first message, not the first frame
    from textual.widgets import Button, Markdown

    from tui_agent.core.events import Event, ToolCallStarted
    from tui_agent.core.session import SavedCall
    from tui_agent.ui.widgets.messages import AssistantMessage
    from tui_agent.ui.widgets.tool_card import ToolCard

FOLD_EVERY = 0.2
"""Seconds between looks at whether more has scrolled far enough up to fold."""
FOLD_MARGIN = 4
"""Rows above the view that stay unfolded (a scroll step shows them at once)."""
COLLECT_AFTER = 0.5
"""Seconds after a reply ends before the full garbage collection held off during it."""


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1 1 1; scrollbar-size-vertical: 1; }
    Transcript #earlier { width: 100%; margin: 1 0 0 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cards: dict[str, ToolCard] = {}
        self.agents = Agents(self, self.cards, lambda: self.script_servers())
        """The sub-agents' cards; their events go there, never into the reply."""
        self.reply: AssistantMessage | None = None
        self.thoughts = Thoughts()
        """The turn's thinking blocks (the model's reasoning, above its reply)."""
        self._earlier: list[dict[str, Any]] = []
        self._calls: Mapping[str, SavedCall] = {}
        self._source: Path | None = None
        self._secrets: Collection[str] = ()
        """How each call of a resumed conversation ended (its cards show the same)."""
        self._keep_on_top: Widget | None = None
        self._loading = False
        self._settling: set[int] = set()
        self.script_servers: Callable[[], list[str]] = list
        """The server names code-mode scripts use now (for a script card's preview)."""
        self.folder = Folder(self, deep=_is_markdown)
        self.collections = FullCollections()
        self._folding = False
        self._folded_at: tuple[int, int] | None = None

    def on_mount(self) -> None:
        self.anchor()
        self.set_interval(FOLD_EVERY, self._fold)

    def on_unmount(self) -> None:
        self.collections.release()

    # -- folding ----------------------------------------------------------------------

    def _following(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - 1

    async def _fold(self) -> None:
        """Fold what is above the view, while it follows the bottom and has grown."""
        where = (self.virtual_size.height, self.size.width)
        if self._folding or where == self._folded_at or not self._following():
            return
        self._folding, self._folded_at = True, where
        try:
            # scroll_y may still be that of a taller content that just shrank (a result
            # folded): fold only what is above the view as it will be.
            top = min(self.scroll_y, self.max_scroll_y)
            await self.folder.fold(round(top) - FOLD_MARGIN)
        finally:
            self._folding = False

    def unfold(self) -> None:
        self._folded_at = None
        self.folder.unfold()

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        """What is below shrank: the anchored view moves up (without a scroll event)."""
        if new.height < old.height and self.folder.shows_folded(new.height - self.size.height):
            self.unfold()

    def on_resize(self) -> None:
        """Another width wraps the folded text to other heights; a taller view reaches
        higher up. Either way, lay it out again."""
        if not self.folder.folded:
            return
        top = min(self.scroll_y, self.virtual_size.height - self.size.height)
        if (self._folded_at and self.size.width != self._folded_at[1]) \
                or self.folder.shows_folded(top):
            self.unfold()

    async def add(self, widget: Widget) -> None:
        await self.mount(widget)

    async def user(self, text: str, chips: Sequence[str] = ()) -> None:
        """The user's own message. Sending one brings the view to the bottom, following
        the reply again, wherever the user had scrolled or moved the focus."""
        from tui_agent.ui.widgets.messages import UserMessage

        await self.end_reply()
        self.thoughts.settle(None)  # a turn that failed left its blocks unsettled
        await self.mount(UserMessage(text, chips))
        self.scroll_end(animate=False)

    async def note(self, text: str, kind: str = "info") -> None:
        from tui_agent.ui.widgets.messages import Note

        await self.end_reply()
        await self.mount(Note(text, kind))

    async def end_reply(self, *, incomplete: bool = False) -> None:
        if self.reply is not None:
            reply, self.reply = self.reply, None
            await reply.finish(incomplete=incomplete)
        if self.collections.release():
            self.set_timer(COLLECT_AFTER, self._collect)

    def _collect(self) -> None:
        if not self.collections.held:  # not if the next reply is already streaming
            gc.collect()

    async def show(self, event: Event) -> None:
        """Render one event of a turn."""
        from tui_agent.core.events import (  # with the first turn, not the first frame
            ApprovalDecided,
            Compacted,
            ErrorOccurred,
            Notice,
            ReasoningDelta,
            Retrying,
            ServerLog,
            TaskUpdate,
            TextDelta,
            ToolCallStarted,
            ToolProgress,
            ToolResult,
            TurnDone,
        )

        if self.agents.takes(event):  # a sub-agent's: to its card
            await self.agents.show(event)
            return
        if not isinstance(event, ReasoningDelta):
            self.thoughts.end()  # whatever comes after the thinking ends it
        match event:
            case ReasoningDelta(delta=delta):
                block = self.thoughts.current
                if block is None:
                    if not delta.strip():
                        return  # some providers open with empty pieces: no block for those
                    await self.end_reply()
                    self.collections.hold()
                    block = self.thoughts.start()
                    await self.mount(block)
                block.add(delta)
            case TextDelta(delta=delta):
                if self.reply is None:
                    from tui_agent.ui.widgets.messages import AssistantMessage

                    self.reply = AssistantMessage()
                    self.collections.hold()
                    await self.mount(self.reply)
                await self.reply.add(delta)
            case ToolCallStarted():
                await self.end_reply()
                await self._card(event)
            case ApprovalDecided(id=call_id, decision=decision, reason=reason, by=by):
                if call_id in self.cards:
                    self.cards[call_id].decided(decision, reason, by)
            case ToolResult(id=call_id, is_error=is_error, text=text, duration=took):
                if call_id in self.cards:
                    self.cards[call_id].show_result(text, is_error=is_error, duration=took)
            case ToolProgress(id=call_id, progress=done, total=total, message=message):
                if call_id in self.cards:
                    self.cards[call_id].show_progress(done, total, message)
            case TaskUpdate(id=call_id, task=task, status=status, status_message=message):
                if call_id in self.cards:
                    self.cards[call_id].show_task(task, status, message)
            case ServerLog(id=str(call_id), level=level, text=text):
                if call_id in self.cards:
                    self.cards[call_id].show_log(level, text)
            case Retrying(attempt=n, max_attempts=total, delay=delay, reason=reason):
                await self.note(f"retry {n}/{total} in {delay:.1f} s: {reason}", "warning")
            case ErrorOccurred(message=message):
                await self.note(message, "error")
            case Notice(message=message):
                await self.note(message)
            case Compacted():
                from tui_agent.ui.widgets.messages import CompactedMarker

                await self.end_reply()
                await self.mount(CompactedMarker(marker_text(event)))
            case TurnDone(usage=usage):
                await self.end_reply()
                self.thoughts.settle(usage)

    async def _card(self, event: ToolCallStarted) -> ToolCard:
        from tui_agent.ui.widgets.tool_card import ToolCard

        card = ToolCard(event.id, event.server or "", event.tool, event.arguments,
                        servers=self.script_servers(), nested=event.parent is not None)
        self.cards[event.id] = card
        parent = self.cards.get(event.parent or "")
        if parent is not None:
            await parent.nest(card)
        else:
            await self.mount(card)
        return card

    def waiting(self, call_id: str, asker: str | None = None) -> None:
        """The call waits for the person (``asker``: the agent call whose sub-agent asks,
        if one does)."""
        if self.agents.waiting(call_id, asker):
            return
        if call_id in self.cards:
            self.cards[call_id].set_status("waiting")

    async def cancelled(self) -> None:
        """The turn was stopped: the reply so far stays, marked; unfinished calls say so."""
        from tui_agent.ui.widgets.messages import Note

        await self.end_reply(incomplete=True)
        self.thoughts.settle(None)
        for card in self.cards.values():
            if card.status in ("pending", "waiting", "running"):
                card.set_status("cancelled")
        await self.agents.stopped()
        await self.mount(Note("stopped; what arrived so far is kept", "warning"))

    async def clear(self) -> None:
        await self.end_reply()
        self.thoughts.settle(None)
        self.cards.clear()
        self.agents.clear()
        self._earlier, self._calls, self._source = [], {}, None
        self.unfold()
        await self.remove_children()
        self.folder.reset()

    # -- a resumed conversation ---------------------------------------------------

    async def replay(self, messages: Sequence[dict[str, Any]],
                     calls: Mapping[str, SavedCall] | None = None,
                     source: Path | None = None, secrets: Collection[str] = ()) -> None:
        """Show a saved conversation: the last messages that fill the screen, the rest on
        demand. ``calls``: how each tool call ended, by id (the session file's word);
        ``source``: the session file (its sub-agents' transcripts are beside it, read with
        ``secrets`` masked)."""
        await self.clear()
        self._calls, self._source, self._secrets = calls or {}, source, secrets
        # The estimate of each message's height errs high (two rows of margin where
        # there is one); if it still falls short, the "show earlier" button is in view.
        rows = max(self.size.height or self.app.size.height, 10)
        start = page_start(messages, first_shown(messages, rows, max(self.size.width, 40)))
        self._earlier = list(messages[:start])
        widgets = self._widgets(messages[start:])
        if self._earlier:
            widgets.insert(0, self._earlier_button())
        await self.mount_all(widgets)
        self.scroll_end(animate=False)

    def _earlier_button(self) -> Button:
        from textual.widgets import Button

        return Button(f"⋯ {len(self._earlier):,} earlier messages: show {PAGE} more",
                      id="earlier", variant="default", compact=True)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id != "earlier":
            return
        event.stop()
        await self.show_earlier()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value and self.folder.shows_folded(new_value):
            self.unfold()  # scrolled up into what was folded
        if new_value <= 0 < old_value and self._earlier and not self._loading:
            self.run_worker(self.show_earlier(), group="earlier")

    async def show_earlier(self) -> None:
        """Mount the page before the first message shown (the view stays where it was)."""
        if self._loading:  # one page at a time; a page taken off the list is always shown
            return
        self._loading = True
        try:
            await self._show_earlier()
        finally:
            self._loading = False

    async def _show_earlier(self) -> None:
        from tui_agent.ui.widgets.messages import AssistantMessage

        for button in self.query("#earlier"):
            await button.remove()
        if not self._earlier:
            return
        start = page_start(self._earlier, len(self._earlier) - PAGE)
        page, self._earlier = self._earlier[start:], self._earlier[:start]
        widgets = self._widgets(page)
        if self._earlier:
            widgets.insert(0, self._earlier_button())
        if not widgets:
            return
        self.unfold()
        was_first = next((c for c in self.children if not isinstance(c, Folded)), None)
        if was_first is not None:  # what was at the top stays there, once the page is laid out
            self._keep_on_top = was_first
            self._settling = {id(w) for w in widgets if isinstance(w, AssistantMessage)}
        await self.mount_all(widgets, before=0 if was_first is not None else None)
        self._settled()

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated
                                              ) -> None:
        """A reply has parsed and mounted its blocks (Markdown does that after it mounts)."""
        self._settling.discard(id(event.markdown))
        self._settled()

    def _settled(self) -> None:
        if self._keep_on_top is not None and not self._settling:
            widget, self._keep_on_top = self._keep_on_top, None
            self.call_after_refresh(self.scroll_to_widget, widget, animate=False, top=True)

    def _widgets(self, messages: Sequence[dict[str, Any]]) -> list[Widget]:
        from tui_agent.ui.widgets.replayed import saved_widgets

        return saved_widgets(messages, self._calls, self.cards, self._source, self._secrets)


def _is_markdown(widget: Widget) -> bool:
    from textual.widgets import Markdown

    return isinstance(widget, Markdown)
