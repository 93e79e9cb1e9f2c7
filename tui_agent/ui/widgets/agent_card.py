"""A card for one sub-agent: the parent's ``agent`` call, shown as the agent at work.

Its head says which agent runs (name, model), the task's first line, and a live line:
the tool it is calling now, how many it called, its tokens and cost as far as they are
known, and the time since it started (repainted at most :data:`TICK` a second, so four
cards running side by side cost a few repaints a second, not one per streamed piece).
When it ends, the head says how (``✓ done``, ``✗ failed``, ``■ stopped``, ``⚠ max
turns``) and the live line gives the totals of :class:`~tui_agent.core.events.AgentFinished`
and, when it did not finish its task, why.

The card is folded: enter (focused) or a click on its head unfolds its transcript below,
the sub-agent's own replies and its tool calls as ordinary nested tool cards (an agent's
own sub-agent, as a card inside this one); ``x`` asks to stop this one sub-agent
(:class:`AgentCard.StopAsked`, which the app answers through the core).
:mod:`~tui_agent.ui.widgets.agents` routes a turn's events to the cards; this module only
draws one. Names, models, tasks and replies come from agent files and models: every
string is cleaned and shown as plain content.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.widgets import Static

from tui_agent.tools.text import clean
from tui_agent.ui.widgets.history import tokens_text
from tui_agent.ui.widgets.messages import plain

if TYPE_CHECKING:
    from textual.timer import Timer

    from tui_agent.core.events import AgentFinished, Usage
    from tui_agent.ui.widgets.messages import AssistantMessage
    from tui_agent.ui.widgets.tool_card import ToolCard

TICK = 0.5
"""Seconds between two repaints of a running card's clock (at most)."""
LABELS: dict[str, str] = {
    "running": "● running", "done": "✓ done", "failed": "✗ failed",
    "max_turns": "⚠ max turns", "stopped": "■ stopped", "stopping": "■ stopping…",
}
TASK_CHARS = 200
"""Characters of the task's first line in the head (the whole task is in the call)."""


def first_line(text: str) -> str:
    """The first line of ``text`` that says something, cut at :data:`TASK_CHARS`."""
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= TASK_CHARS else line[:TASK_CHARS - 1] + "…"


def seconds_text(seconds: float) -> str:
    """``9 s``, ``1 m 05 s``: a clock that moves a second at a time."""
    whole = int(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} m {whole % 60:02d} s"


class AgentCard(Vertical, can_focus=True):
    """One sub-agent. ``call_id`` is the parent's ``agent`` call (and the agent's id);
    ``nested``: a sub-agent's own sub-agent, inside its card."""

    DEFAULT_CSS = """
    AgentCard {
        height: auto; margin: 1 0 0 0; padding: 0 1;
        border: round $secondary; background: $surface;
    }
    AgentCard:focus { border: round $accent; background: $boost; }
    AgentCard .head { height: 1; }
    AgentCard .name { width: 1fr; text-style: bold; color: $foreground; }
    AgentCard .status { width: auto; color: $accent; }
    AgentCard .task { color: $foreground; }
    AgentCard .live { color: $text-muted; }
    AgentCard .reason { color: $warning; }
    AgentCard .hint { display: none; color: $text-muted; text-style: italic; }
    AgentCard:focus .hint { display: block; }
    AgentCard .body { display: none; height: auto; border-top: dashed $panel-lighten-2; }
    AgentCard.-expanded .body { display: block; }
    AgentCard.-done .status { color: $success; }
    AgentCard.-failed { border: round $error 60%; }
    AgentCard.-failed .status { color: $error; }
    AgentCard.-max_turns .status, AgentCard.-stopped .status,
    AgentCard.-stopping .status { color: $warning; }
    """
    BINDINGS = [Binding("enter", "fold", "Show/hide its transcript"),
                Binding("x", "stop", "Stop this sub-agent")]

    class StopAsked(Message):
        """The person asked to stop the sub-agent of the call ``call_id`` (``x``)."""

        def __init__(self, card: AgentCard) -> None:
            super().__init__()
            self.card = card
            self.call_id = card.call_id

    def __init__(self, call_id: str, name: str, model: str, task: str, *,
                 nested: bool = False) -> None:
        super().__init__(classes="-running")
        self.call_id, self.agent_name, self.model, self.task_text = call_id, name, model, task
        self.nested = nested
        self.status = "running"
        self.now: Callable[[], float] = time.monotonic
        """The clock (a snapshot test stops it)."""
        self.started = self.now()
        self.duration: float | None = None
        self.running: dict[str, str] = {}
        """Its calls under way (call id → ``server · tool``), in the order they began."""
        self.tools: list[str] = []
        """The tools it called, in order (a call each)."""
        self.context: int | None = None
        """Tokens of its context at its latest request (while no usage is known)."""
        self.usage: Usage | None = None
        self.turns: int | None = None
        self.reason = ""
        self.cards: dict[str, ToolCard] = {}
        """Its own tool calls' cards, by call id (ids are the sub-agent's model's: they
        may repeat the parent's)."""
        self.reply: AssistantMessage | None = None
        self.loader: Callable[[AgentCard], Awaitable[None]] | None = None
        """For a resumed card: fills the body the first time it unfolds."""
        self._live: Static | None = None
        self._head: Static | None = None
        self._reason: Static | None = None
        self._hint: Static | None = None
        self._clock: Timer | None = None

    # -- drawing ----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(classes="head"):
            yield Static(plain(self._title()), classes="name")
            self._head = Static(plain(LABELS[self.status]), classes="status")
            yield self._head
        yield Static(plain(first_line(self.task_text) or "(no task)"), classes="task")
        self._live = Static(self.live_text(), classes="live")
        yield self._live
        self._reason = Static(plain(self.reason), classes="reason")
        self._reason.display = bool(self.reason)
        yield self._reason
        self._hint = Static(self._hint_text(), classes="hint")
        yield self._hint
        yield Vertical(classes="body")

    def _hint_text(self) -> Content:
        keys = "enter shows/hides its transcript"
        return plain(keys + " · x stops it" if self.status == "running" else keys)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` is offered (in the footer) while the sub-agent runs."""
        return self.status == "running" if action == "stop" else True

    def _title(self) -> str:
        return f"⧉ agent {self.agent_name} · {self.model}" if self.model \
            else f"⧉ agent {self.agent_name}"

    def on_mount(self) -> None:
        if self.status in ("running", "stopping"):
            self._clock = self.set_interval(TICK, self.repaint, name="agent clock")

    @property
    def body(self) -> Vertical:
        return self.query_one(".body", Vertical)

    def elapsed(self) -> float:
        return self.duration if self.duration is not None else self.now() - self.started

    def live_text(self) -> Content:
        """``calling time · get_current_time · 2 tools · 1.2k tokens · $0.0012 · 9 s``."""
        parts: list[str] = []
        if self.status in ("running", "stopping"):
            parts.append(f"calling {self.current}" if self.current else "thinking")
        if self.tools:
            parts.append(f"{len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}")
        if self.usage is not None and self.usage.total_tokens:
            parts.append(f"{tokens_text(self.usage.total_tokens)} tokens")
        elif self.context:
            parts.append(f"context {tokens_text(self.context)} tokens")
        if self.usage is not None:
            cost = self.usage.cost
            parts.append("cost unknown" if cost is None else f"${cost:.4f}")
        if self.turns:
            parts.append(f"{self.turns} turn{'s' if self.turns != 1 else ''}")
        parts.append(seconds_text(self.elapsed()) if self.duration is None
                     else f"{self.duration:.1f} s")
        return plain(" · ".join(parts))

    def repaint(self) -> None:
        if self._live is not None:
            self._live.update(self.live_text())

    def set_status(self, status: str, reason: str = "") -> None:
        self.remove_class(f"-{self.status}")
        self.status = status
        self.add_class(f"-{status}")
        if reason:
            self.reason = reason
        if self._head is not None:
            self._head.update(plain(LABELS.get(status, status)))
        if self._reason is not None:
            self._reason.update(plain(self.reason))
            self._reason.display = bool(self.reason)
        if self._hint is not None:
            self._hint.update(self._hint_text())
        if self._clock is not None and status not in ("running", "stopping"):
            self._clock.stop()  # an ended card's line no longer moves
            self._clock = None
        self.refresh_bindings()
        self.repaint()

    # -- what happens to it -----------------------------------------------------------

    @property
    def current(self) -> str | None:
        """The tool it is calling now, the latest begun (None: it thinks or writes)."""
        return next(reversed(self.running.values()), None)

    def calling(self, call_id: str, tool: str) -> None:
        self.running[call_id] = tool
        self.tools.append(tool)
        self.repaint()

    def called(self, call_id: str) -> None:
        if self.running.pop(call_id, None) is not None:
            self.repaint()

    def measured(self, *, context: int | None = None, usage: Usage | None = None) -> None:
        """Its size (a request's context) or its usage so far (a turn of it ended)."""
        if context is not None:
            self.context = context
        if usage is not None:
            self.usage = usage if self.usage is None else self.usage + usage

    def finish(self, event: AgentFinished) -> None:
        """It ended: its totals (the core's own count) and how."""
        self.duration, self.usage, self.turns = event.duration, event.usage, event.turns
        self.running.clear()
        if event.tools:
            self.tools = list(event.tools)
        for card in self.cards.values():  # a call it left running was stopped with it
            if card.status in ("pending", "waiting", "running"):
                card.set_status("cancelled")
        self.set_status(event.status, event.reason)

    def restore(self, status: str, usage: Usage, duration: float, turns: int,
                tools: tuple[str, ...], reason: str = "") -> None:
        """End as a resumed session says it ended (before the card is mounted), with why
        when it did not finish."""
        self.usage, self.duration, self.turns, self.tools = usage, duration, turns, list(tools)
        self.set_status(status if status in LABELS else "done", reason)

    def stopped(self) -> None:
        """The parent's turn was stopped: a card still running says so (its calls
        too)."""
        if self.status not in ("running", "stopping"):
            return
        self.duration = self.elapsed()
        self.running.clear()
        for card in self.cards.values():
            if card.status in ("pending", "waiting", "running"):
                card.set_status("cancelled")
        self.set_status("stopped")

    def ended(self, text: str, *, is_error: bool) -> None:
        """The parent's call ended without the agent saying it did (its end event never
        came): a failure says why."""
        if self.status in ("running", "stopping"):
            self.duration = self.elapsed()
            self.set_status("failed" if is_error else "done",
                            first_line(text) if is_error else "")

    # -- keys and clicks --------------------------------------------------------------

    async def action_fold(self) -> None:
        expanding = not self.has_class("-expanded")
        if expanding and self.loader is not None:
            loader, self.loader = self.loader, None
            await loader(self)
        self.set_class(expanding, "-expanded")

    def action_stop(self) -> None:
        if self.status != "running":
            self.app.notify(clean(f"the sub-agent {self.agent_name} is not running"),
                            markup=False)
            return
        self.post_message(self.StopAsked(self))

    async def on_click(self, event: Click) -> None:
        """A click on the head (not on what the unfolded transcript shows) folds it."""
        widget = event.widget
        head = self.query_one(".head")
        if widget is not None and (widget is head or head in widget.ancestors):
            event.stop()
            self.focus()
            await self.action_fold()

