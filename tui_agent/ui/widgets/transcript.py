"""The conversation on screen: it renders the core's events and a resumed history.

The view is anchored: it follows the stream to the bottom until the user scrolls
up, and follows again once they scroll back down. A long resumed conversation
shows its last messages at once and the earlier ones on demand, so opening a
2,000-message session costs about what opening an empty one does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Button

from tui_agent.core.events import (
    ApprovalDecided,
    ErrorOccurred,
    Event,
    Notice,
    Retrying,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnDone,
)
from tui_agent.core.scripts import META, META_SERVER

if TYPE_CHECKING:  # Markdown (markdown-it) loads with the first message, not the first frame
    from tui_agent.ui.widgets.messages import AssistantMessage
    from tui_agent.ui.widgets.tool_card import ToolCard

PAGE = 12
"""Messages of a resumed conversation shown at first, and per "show earlier" press: a
Markdown reply costs ~20 ms to mount, so a page is what fills a screen, not more."""


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1 1 1; scrollbar-size-vertical: 1; }
    Transcript #earlier { width: 100%; margin: 1 0 0 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cards: dict[str, ToolCard] = {}
        self.reply: AssistantMessage | None = None
        self._earlier: list[dict[str, Any]] = []
        self.script_servers: Callable[[], list[str]] = list
        """The server names code-mode scripts use now (for a script card's preview)."""

    def on_mount(self) -> None:
        self.anchor()

    async def add(self, widget: Widget) -> None:
        await self.mount(widget)

    async def user(self, text: str) -> None:
        from tui_agent.ui.widgets.messages import UserMessage

        await self.end_reply()
        await self.mount(UserMessage(text))

    async def note(self, text: str, kind: str = "info") -> None:
        from tui_agent.ui.widgets.messages import Note

        await self.end_reply()
        await self.mount(Note(text, kind))

    async def end_reply(self, *, incomplete: bool = False) -> None:
        if self.reply is not None:
            reply, self.reply = self.reply, None
            await reply.finish(incomplete=incomplete)

    async def show(self, event: Event) -> None:
        """Render one event of a turn."""
        match event:
            case TextDelta(delta=delta):
                if self.reply is None:
                    from tui_agent.ui.widgets.messages import AssistantMessage

                    self.reply = AssistantMessage()
                    await self.mount(self.reply)
                await self.reply.add(delta)
            case ToolCallStarted():
                await self.end_reply()
                await self._card(event)
            case ApprovalDecided(id=call_id, decision=decision, reason=reason):
                if call_id in self.cards:
                    self.cards[call_id].set_status(
                        "denied" if decision == "denied" else "running", reason=reason)
            case ToolResult(id=call_id, is_error=is_error, text=text, duration=took):
                if call_id in self.cards:
                    self.cards[call_id].show_result(text, is_error=is_error, duration=took)
            case Retrying(attempt=n, max_attempts=total, delay=delay, reason=reason):
                await self.note(f"retry {n}/{total} in {delay:.1f} s: {reason}", "warning")
            case ErrorOccurred(message=message):
                await self.note(message, "error")
            case Notice(message=message):
                await self.note(message)
            case TurnDone():
                await self.end_reply()

    async def _card(self, event: ToolCallStarted) -> ToolCard:
        from tui_agent.ui.widgets.tool_card import ToolCard

        card = ToolCard(event.id, event.server, event.tool, event.arguments,
                        servers=self.script_servers(), nested=event.parent is not None)
        self.cards[event.id] = card
        parent = self.cards.get(event.parent or "")
        if parent is not None:
            await parent.nest(card)
        else:
            await self.mount(card)
        return card

    def waiting(self, call_id: str) -> None:
        if call_id in self.cards:
            self.cards[call_id].set_status("waiting")

    async def cancelled(self) -> None:
        """The turn was stopped: the reply so far stays, marked; unfinished calls say so."""
        from tui_agent.ui.widgets.messages import Note

        await self.end_reply(incomplete=True)
        for card in self.cards.values():
            if card.status in ("pending", "waiting", "running"):
                card.set_status("cancelled")
        await self.mount(Note("stopped; what arrived so far is kept", "warning"))

    async def clear(self) -> None:
        await self.end_reply()
        self.cards.clear()
        self._earlier = []
        await self.remove_children()

    # -- a resumed conversation ---------------------------------------------------

    async def replay(self, messages: Sequence[dict[str, Any]]) -> None:
        """Show a saved conversation: the last :data:`PAGE` messages, the rest on demand."""
        await self.clear()
        start = _page_start(messages, len(messages) - PAGE)
        self._earlier = list(messages[:start])
        widgets = self._widgets(messages[start:])
        if self._earlier:
            widgets.insert(0, self._earlier_button())
        await self.mount_all(widgets)
        self.scroll_end(animate=False)

    def _earlier_button(self) -> Button:
        return Button(f"⋯ {len(self._earlier):,} earlier messages: show {PAGE} more",
                      id="earlier", variant="default", compact=True)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id != "earlier":
            return
        event.stop()
        await event.button.remove()
        start = _page_start(self._earlier, len(self._earlier) - PAGE)
        page, self._earlier = self._earlier[start:], self._earlier[:start]
        widgets = self._widgets(page)
        if self._earlier:
            widgets.insert(0, self._earlier_button())
        if widgets:
            await self.mount_all(widgets, before=0 if self.children else None)

    def _widgets(self, messages: Sequence[dict[str, Any]]) -> list[Widget]:
        from tui_agent.ui.widgets.messages import AssistantMessage, UserMessage

        out: list[Widget] = []
        for message in messages:
            role, content = message.get("role"), message.get("content")
            if role == "user":
                out.append(UserMessage(_text(content)))
            elif role == "assistant":
                if _text(content).strip():
                    out.append(AssistantMessage(_text(content)))
                for call in message.get("tool_calls") or []:
                    out.append(self._saved_card(call))
            elif role == "tool" and message.get("tool_call_id") in self.cards:
                text = _text(content)
                card = self.cards[message["tool_call_id"]]
                card.saved_result = (text, _looks_failed(text))
        return out

    def _saved_card(self, call: dict[str, Any]) -> ToolCard:
        from tui_agent.ui.widgets.tool_card import ToolCard

        function = call.get("function") or {}
        server, _, tool = str(function.get("name", "?")).partition("__")
        if not tool and server in META:
            server, tool = META_SERVER, server
        card = ToolCard(str(call.get("id", "")), server if tool else "", tool or server,
                        _arguments(function.get("arguments")))
        self.cards[card.call_id] = card
        return card


def _page_start(messages: Sequence[dict[str, Any]], start: int) -> int:
    """Never start a page on a tool result: it belongs with the call before it."""
    start = max(start, 0)
    while 0 < start < len(messages) and messages[start].get("role") == "tool":
        start -= 1
    return start


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _arguments(raw: Any) -> dict[str, Any]:
    import json

    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {"(unparsed)": raw}
    return value if isinstance(value, dict) else {}


def _looks_failed(text: str) -> bool:
    return text.startswith(("error:", "The user denied", "not run:"))
