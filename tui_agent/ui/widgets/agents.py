"""Where a sub-agent's events go in the transcript: to its card, never into the parent's
own reply.

Every event a sub-agent emits carries ``agent`` (its :class:`~tui_agent.core.events.AgentTag`,
whose id is the parent's ``agent`` call). :class:`Agents` keeps every card of the
conversation by that id, in one flat table, so the events of a sub-agent's own
sub-agent (tagged with the inner id) reach the inner card, which sits inside the outer
one. :class:`~tui_agent.core.events.AgentStarted` turns the ``agent`` call's tool card
into an agent card in its place (or adds one, if there is none); what the agent then
streams, calls and is told goes into that card's folded transcript
(:mod:`~tui_agent.ui.widgets.agent_card`), and its live line follows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the cards (and Markdown, for their replies) load with the first agent
    from textual.widget import Widget

    from tui_agent.core.events import AgentStarted, Event, ToolCallStarted
    from tui_agent.ui.widgets.agent_card import AgentCard
    from tui_agent.ui.widgets.tool_card import ToolCard


class Agents:
    """The sub-agents' cards of one transcript, by call id, and the routing of their
    events."""

    def __init__(self, view: Widget, calls: dict[str, ToolCard],
                 servers: Callable[[], list[str]]) -> None:
        self.view = view
        """Where a sub-agent of the conversation's own calls shows (the transcript)."""
        self.calls = calls
        """The conversation's own tool cards, by call id (the transcript's)."""
        self.servers = servers
        self.cards: dict[str, AgentCard] = {}
        self.asked: set[tuple[str, str]] = set()
        """Calls (agent id, call id) the gate asks about before their card came: a
        sub-agent runs beside the stream that carries its events to the screen."""

    def clear(self) -> None:
        self.cards.clear()
        self.asked.clear()

    async def stopped(self) -> None:
        """The turn was stopped: every sub-agent with it (what each wrote is kept)."""
        for card in self.cards.values():
            if card.status in ("running", "stopping"):
                await self._end_reply(card, incomplete=True)
                card.stopped()

    def waiting(self, call_id: str, asker: str | None) -> bool:
        """A sub-agent's call waits for the person: its card says so (``asker``: the id of
        the agent call whose sub-agent asks, :attr:`PendingCall.agent_id`). False when the
        call is not a sub-agent's."""
        if asker is None:
            return False
        card = self.cards.get(asker)
        if card is not None and call_id in card.cards:
            card.cards[call_id].set_status("waiting")
        else:  # its card comes with the call's event, still on its way
            self.asked.add((asker, call_id))
        return True

    def takes(self, event: Event) -> bool:
        """Whether ``event`` is for a sub-agent's card (its own, its start or end, or the
        parent's result of its call)."""
        from tui_agent.core.events import AgentFinished, AgentStarted, ToolResult

        return event.agent is not None or isinstance(event, AgentStarted | AgentFinished) \
            or (isinstance(event, ToolResult) and event.id in self.cards)

    async def show(self, event: Event) -> None:
        from tui_agent.core.events import AgentFinished, AgentStarted, ToolResult

        match event:
            case AgentStarted():
                await self._start(event)
            case AgentFinished(id=call_id) if call_id in self.cards:
                await self._end_reply(self.cards[call_id])
                self.cards[call_id].finish(event)
            case ToolResult(id=call_id, is_error=is_error, text=text) if call_id in self.cards:
                self.cards[call_id].ended(text, is_error=is_error)
                outer = self.cards.get(event.agent.id) if event.agent is not None else None
                if outer is not None:  # an agent's own sub-agent answered it
                    outer.called(call_id)
            case _ if event.agent is not None and event.agent.id in self.cards:
                await self._inside(self.cards[event.agent.id], event)
            # else: a sub-agent this transcript never saw start (cleared meanwhile):
            # dropped, never shown as the parent's

    async def _start(self, event: AgentStarted) -> None:
        from tui_agent.ui.widgets.agent_card import AgentCard

        outer = self.cards.get(event.agent.id) if event.agent is not None else None
        if event.agent is not None and outer is None:
            return
        calls = outer.cards if outer is not None else self.calls
        card = AgentCard(event.id, event.name, event.model, event.task,
                         nested=outer is not None)
        self.cards[event.id] = card
        call = calls.pop(event.id, None)
        where: Widget = outer.body if outer is not None else self.view
        if call is not None and call.parent is where:
            await where.mount(card, after=call)
            await call.remove()
        else:
            await where.mount(card)
        if outer is not None:
            outer.repaint()

    async def _inside(self, card: AgentCard, event: Event) -> None:
        """One event of the sub-agent's own: into its transcript, and its live line."""
        from tui_agent.core.events import (
            ApprovalDecided,
            Compacted,
            ContextSize,
            ErrorOccurred,
            Notice,
            Retrying,
            RoundUsage,
            ServerLog,
            TaskUpdate,
            TextDelta,
            ToolCallStarted,
            ToolProgress,
            ToolResult,
            TurnDone,
        )

        match event:
            case TextDelta(delta=delta):
                await self._text(card, delta)
            case ToolCallStarted():
                await self._end_reply(card)
                await self._call(card, event)
            case ApprovalDecided(id=call_id, decision=decision, reason=reason, by=by) \
                    if call_id in card.cards:
                card.cards[call_id].decided(decision, reason, by)
            case ToolResult(id=call_id, is_error=is_error, text=text, duration=took) \
                    if call_id in card.cards:
                card.cards[call_id].show_result(text, is_error=is_error, duration=took)
                card.called(call_id)
            case ToolProgress(id=call_id, progress=done, total=total, message=message) \
                    if call_id in card.cards:
                card.cards[call_id].show_progress(done, total, message)
            case TaskUpdate(id=call_id, task=task, status=status, status_message=message) \
                    if call_id in card.cards:
                card.cards[call_id].show_task(task, status, message)
            case ServerLog(id=str(call_id), level=level, text=text) if call_id in card.cards:
                card.cards[call_id].show_log(level, text)
            case ContextSize(tokens=tokens):
                card.measured(context=tokens)
            case RoundUsage(usage=usage):
                card.measured(usage=usage)
            case TurnDone(usage=usage):
                await self._end_reply(card)
                card.measured(usage=usage)
            case Retrying(attempt=n, max_attempts=total, delay=delay, reason=reason):
                await self._note(card, f"retry {n}/{total} in {delay:.1f} s: {reason}",
                                 "warning")
            case ErrorOccurred(message=message):
                await self._note(card, message, "error")
            case Notice(message=message):
                await self._note(card, message)
            case Compacted():
                await self._note(card, f"compacted: {event.done()}")
            # its reasoning stays out of the card (the reply and the calls are its record)

    async def _text(self, card: AgentCard, delta: str) -> None:
        if card.reply is None:
            from tui_agent.ui.widgets.messages import AssistantMessage

            card.reply = AssistantMessage()
            await card.body.mount(card.reply)
        await card.reply.add(delta)

    @staticmethod
    async def _end_reply(card: AgentCard, *, incomplete: bool = False) -> None:
        if card.reply is not None:
            reply, card.reply = card.reply, None
            await reply.finish(incomplete=incomplete)

    async def _call(self, card: AgentCard, event: ToolCallStarted) -> None:
        from tui_agent.ui.widgets.tool_card import ToolCard

        call = ToolCard(event.id, event.server or "", event.tool, event.arguments,
                        servers=self.servers(),
                        nested=event.parent is not None)
        card.cards[event.id] = call
        if (card.call_id, event.id) in self.asked:
            self.asked.discard((card.call_id, event.id))
            call.set_status("waiting")
        script = card.cards.get(event.parent or "")
        if script is not None:
            await script.nest(call)
            return
        await card.body.mount(call)
        card.calling(event.id, f"{event.server} · {event.tool}" if event.server else event.tool)

    async def _note(self, card: AgentCard, text: str, kind: str = "info") -> None:
        from tui_agent.ui.widgets.messages import Note

        await self._end_reply(card)
        await card.body.mount(Note(text, kind))
