"""How each tool call of a conversation ended, as its card showed it, kept in the session
file so a resumed conversation shows the same: :class:`SavedCall` (the record) and
:class:`CallLog` (what builds it from a turn's events).

The model reads only a call's result (the ``tool`` message); the card showed more: the
approval (``approved``, ``denied`` or ``auto``, why, and what decided it), whether the
call failed, was denied or was cancelled, how long it took, and, for a code-mode script,
each call the script made, nested under it. :class:`CallLog` sees the events of a batch
of calls as the front ends see them and gives, per call the model made, the ``call``
field the writer puts beside its ``tool`` message (:meth:`~.writer.SessionWriter.message`);
the loader reads it back onto the :class:`~.records.Entry`. A file without it (an older
tui-agent's) loads as before, its cards guessed from the result's words.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from tui_agent.core.events import ApprovalDecided, Event, ToolCallStarted, ToolResult, Usage

Ending = Literal["done", "failed", "denied", "cancelled"]
ENDINGS: tuple[Ending, ...] = ("done", "failed", "denied", "cancelled")
NESTED_TEXT = 8_000
"""Characters of a script's call's result kept in the session (its card's text; the
script read the whole of it, the model never did)."""


AGENT_STATUSES = ("done", "failed", "max_turns", "stopped")


@dataclass(frozen=True)
class SavedAgent:
    """How the sub-agent of an ``agent`` call ended (its card): its ``usage`` on its own
    model, ``duration`` in seconds, model round trips (``turns``), the tools it called,
    its transcript, a session file of its own (``file``: relative to the parent's folder,
    ``<parent stem>.agents/<call id>.jsonl``; empty when none was written), and why it
    ended as it did when that was not done (``reason``, as ``agent_end`` said it)."""

    name: str
    model: str
    status: str
    usage: Usage = field(default_factory=Usage)
    duration: float = 0.0
    turns: int = 0
    tools: tuple[str, ...] = ()
    file: str = ""
    reason: str = ""

    def record(self) -> dict[str, Any]:
        record = {"name": self.name, "model": self.model, "status": self.status,
                  "usage": asdict(self.usage), "duration": self.duration, "turns": self.turns,
                  "tools": list(self.tools), "file": self.file}
        return record | ({"reason": self.reason} if self.reason else {})

    @classmethod
    def of(cls, record: Any) -> SavedAgent | None:
        """The sub-agent a record holds; None for one this version cannot read."""
        if not isinstance(record, dict) or record.get("status") not in AGENT_STATUSES:
            return None
        name, model, file = (record.get(k) for k in ("name", "model", "file"))
        tools, usage = record.get("tools"), record.get("usage")
        duration, turns = record.get("duration", 0.0), record.get("turns", 0)
        if not all(isinstance(v, str) for v in (name, model, file)) or \
                not isinstance(tools, list) or not all(isinstance(t, str) for t in tools) or \
                isinstance(duration, bool) or not isinstance(duration, int | float) or \
                isinstance(turns, bool) or not isinstance(turns, int):
            return None
        try:
            spent = Usage(**usage) if isinstance(usage, dict) else Usage()
        except TypeError:
            spent = Usage()
        reason = record.get("reason", "")  # not written by versions before it was kept
        return cls(str(name), str(model), record["status"], spent, float(duration), turns,
                   tuple(tools), str(file), reason if isinstance(reason, str) else "")


@dataclass(frozen=True)
class SavedCall:
    """How one call ended. For a call the model made, its name, arguments and result are
    in the conversation's messages; for a call a script made (in ``calls``), they are here
    (``text`` at most :data:`NESTED_TEXT` characters)."""

    status: Ending
    approval: str | None = None
    """``approved``, ``denied`` or ``auto``; None when the call never reached the gate
    (a tool that does not exist, arguments that are not JSON)."""
    reason: str | None = None
    took: float | None = None
    id: str = ""
    name: str = ""
    server: str | None = None
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    calls: tuple[SavedCall, ...] = ()
    by: str | None = None
    """What decided the approval (a mode, a rule, a server's list, a hook, "you"), as the
    ``approval`` event said; None when it did not say (an older file, a code-mode
    meta-tool)."""
    agent: SavedAgent | None = None
    """For an ``agent`` call: how its sub-agent ended, and where its transcript is."""

    def record(self, *, nested: bool = False) -> dict[str, Any]:
        """As the session file holds it (fields that say nothing left out)."""
        out: dict[str, Any] = {"status": self.status}
        for key in ("approval", "reason", "by", "took"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if nested:
            out |= {"id": self.id, "name": self.name, "server": self.server,
                    "tool": self.tool, "arguments": self.arguments, "text": self.text}
        if self.calls:
            out["calls"] = [c.record(nested=True) for c in self.calls]
        if self.agent is not None:
            out["agent"] = self.agent.record()
        return out

    @classmethod
    def of(cls, record: Any) -> SavedCall | None:
        """The call a record holds; None for one this version cannot read (a field of
        the wrong type: the card is then guessed, as for an older file)."""
        if not isinstance(record, dict) or record.get("status") not in ENDINGS:
            return None
        text = {k: record.get(k) for k in ("approval", "reason", "id", "name", "server",
                                           "tool", "text", "by")}
        if any(v is not None and not isinstance(v, str) for v in text.values()):
            return None
        took, arguments, calls = (record.get(k) for k in ("took", "arguments", "calls"))
        if took is not None and (isinstance(took, bool) or not isinstance(took, int | float)):
            return None
        nested = [cls.of(c) for c in calls] if isinstance(calls, list) else []
        return cls(record["status"], text["approval"], text["reason"], took,
                   text["id"] or "", text["name"] or "", text["server"], text["tool"] or "",
                   arguments if isinstance(arguments, dict) else {}, text["text"] or "",
                   tuple(c for c in nested if c is not None), text["by"],
                   SavedAgent.of(record.get("agent")))


def ending(approval: str | None, result: ToolResult | None) -> Ending:
    """The card's last state: denied at the gate, else failed or done by its result, else
    (no result came before the turn stopped) cancelled."""
    if approval == "denied":
        return "denied"
    if result is None:
        return "cancelled"
    return "failed" if result.is_error else "done"


@dataclass
class _Seen:
    started: ToolCallStarted
    approval: str | None = None
    reason: str | None = None
    by: str | None = None
    result: ToolResult | None = None


def kept_text(text: str) -> str:
    """A call's result as the session keeps it: at most :data:`NESTED_TEXT` characters,
    and how many more there were."""
    if len(text) <= NESTED_TEXT:
        return text
    return text[:NESTED_TEXT] + (f"\n… {len(text) - NESTED_TEXT:,} more characters "
                                 "not kept in the session")


class CallLog:
    """The events of one batch of tool calls, as the front ends saw them, folded into a
    :class:`SavedCall` per call."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}

    def saw(self, event: Event) -> Event:
        """Note ``event`` (any event; only a call's start, approval and result count) and
        give it back, so a generator can ``yield log.saw(event)``."""
        if isinstance(event, ToolCallStarted):
            self._seen[event.id] = _Seen(event)
        elif isinstance(event, ApprovalDecided) and event.id in self._seen:
            seen = self._seen[event.id]
            seen.approval, seen.reason, seen.by = event.decision, event.reason, event.by
        elif isinstance(event, ToolResult) and event.id in self._seen:
            # Only what the session keeps: a script's five 2 MB results were all held
            # here until its batch ended (tests/test_memory.py).
            self._seen[event.id].result = replace(event, text=kept_text(event.text))
        return event

    def saved(self, call_id: str) -> SavedCall | None:
        """How call ``call_id`` ended, with the calls it made; None for a call not seen."""
        seen = self._seen.get(call_id)
        if seen is None:
            return None
        result = seen.result
        text = result.text if result is not None else ""
        start = seen.started
        return SavedCall(ending(seen.approval, result), seen.approval, seen.reason,
                         result.duration if result is not None else None,
                         start.id, start.name, start.server, start.tool,
                         dict(start.arguments), text,
                         tuple(s for c in self._seen.values() if c.started.parent == call_id
                               and (s := self.saved(c.started.id)) is not None), seen.by)
