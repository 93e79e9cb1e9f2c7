"""Secrets masked in the events a front end shows: :class:`EventMasker` over a turn's
events (each agent's streamed text apart), :func:`masked` over any JSON value."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from tui_agent.config.interpolate import StreamMasker, mask, mask_json
from tui_agent.core.events.kinds import AgentTag, Event, ReasoningDelta, TextDelta


class EventMasker:
    """Every secret masked in the events of a turn, for a front end that shows them: the
    streamed text and the streamed reasoning each through a
    :class:`~tui_agent.config.interpolate.StreamMasker` (a secret split across two pieces
    is still masked; what could start one is held back until the next event), every other
    event's text, arguments and values field by field."""

    def __init__(self, secrets: frozenset[str]) -> None:
        self.secrets = secrets
        self._streams: dict[AgentTag | None, tuple[StreamMasker, StreamMasker]] = {}
        """The text and the reasoning streams of the conversation (None) and of each
        sub-agent: streams that interleave are masked apart."""

    def _of(self, agent: AgentTag | None) -> tuple[StreamMasker, StreamMasker]:
        found = self._streams.get(agent)
        if found is None:
            found = self._streams[agent] = (StreamMasker(self.secrets),
                                            StreamMasker(self.secrets))
        return found

    def __call__(self, event: Event) -> list[Event]:
        """What to show for ``event``: nothing (text held back), or one to three events
        (what the other stream of the same agent held back comes first)."""
        who = event.agent
        stream, thinking = self._of(who)
        if isinstance(event, TextDelta):
            text = stream.feed(event.delta)
            return self._held(who, text=False) + ([TextDelta(text, agent=who)] if text else [])
        if isinstance(event, ReasoningDelta):
            text = thinking.feed(event.delta)
            return self._held(who, reasoning=False) + (
                [ReasoningDelta(text, agent=who)] if text else [])
        return self._held(who) + [self._fields(event)]

    def flush(self) -> list[Event]:
        """What the streams still hold, when the turn ends (a cancelled one included)."""
        return [e for who in list(self._streams) for e in self._held(who)]

    def _held(self, who: AgentTag | None, *, text: bool = True, reasoning: bool = True
              ) -> list[Event]:
        """What ``who``'s streams held back, now that something else of it came."""
        stream, thinking = self._of(who)
        held: list[Event] = []
        if reasoning and (thought := thinking.flush()):
            held.append(ReasoningDelta(thought, agent=who))
        if text and (said := stream.flush()):
            held.append(TextDelta(said, agent=who))
        return held

    def _fields(self, event: Event) -> Event:
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(event):
            value = getattr(event, f.name)
            if isinstance(value, str):
                changes[f.name] = mask(value, self.secrets)
            elif isinstance(value, dict | list):
                changes[f.name] = masked(value, self.secrets)
        return dataclasses.replace(event, **changes)


def masked(value: Any, secrets: frozenset[str]) -> Any:
    """``value`` (a message, arguments: anything JSON holds) with every secret in it masked;
    ``value`` itself when there was none, or when it is not JSON."""
    try:
        line = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return value
    hidden = mask_json(line, secrets)
    return value if hidden == line else json.loads(hidden)
