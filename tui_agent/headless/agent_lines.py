"""What the text output (:class:`~tui_agent.headless.printers.TextPrinter`) shows of a
sub-agent: its start, each of its tool calls, their approvals and results, its notes and
errors, and its end (status, tokens, cost, time), each line prefixed with its name; not
its streamed text or thinking (its final reply reaches the parent's model, whose answer
is what the run prints)."""

from __future__ import annotations

import json

from tui_agent.core.events import (
    AgentFinished,
    AgentStarted,
    ApprovalDecided,
    ErrorOccurred,
    Event,
    Notice,
    ToolCallStarted,
    ToolResult,
)
from tui_agent.tools.text import clean
from tui_agent.tools.text import first_line as task_line

ARGUMENTS = 200
"""Characters of a sub-agent's call's arguments shown."""


def is_agents(event: Event) -> bool:
    """Whether ``event`` is a sub-agent's (or its start or end): :func:`agent_line` says
    what of it is shown."""
    return event.agent is not None or isinstance(event, AgentStarted | AgentFinished)


def agent_line(event: Event, first_line: str = "") -> str | None:
    """The line ``event`` shows, or None (``first_line``: a result's, as the printer
    shortens it)."""
    who = f"[{clean(event.agent.name)}] " if event.agent is not None else ""
    match event:
        case AgentStarted(name=name, model=model, task=task):
            line = task_line(task)[:ARGUMENTS]
            return f"{who}⇢ agent {clean(name)} ({clean(model)}): {line}"
        case AgentFinished(name=name, status=status, usage=usage, duration=took,
                           turns=turns, reason=reason):
            why = f": {clean(reason)}" if reason else ""
            return (f"{who}⇠ agent {clean(name)} {status}{why} ({turns} turns, "
                    f"{usage.spent_text()}, {took:.1f} s)")
        case ToolCallStarted(name=name, arguments=args):
            shown = clean(json.dumps(args, ensure_ascii=False))
            more = "…" if len(shown) > ARGUMENTS else ""
            return f"{who}→ {clean(name)} {shown[:ARGUMENTS]}{more}"
        case ApprovalDecided(decision="auto"):
            return None
        case ApprovalDecided(decision=decision, reason=reason, by=by):
            said = f": {clean(reason)}" if reason else f" by {clean(by)}" if by else ""
            return f"{who}  {decision}{said}"
        case ToolResult(is_error=is_error):
            return f"{who}  {'✗' if is_error else '←'} {first_line}"
        case ErrorOccurred(message=message):
            return f"{who}error: {clean(message)}"
        case Notice(message=message):
            return f"{who}note: {clean(message)}"
    return None
