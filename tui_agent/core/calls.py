"""The tool calls of one reply on their way through the loop: resolving the tool the
model named, parsing its arguments (a problem becomes the call's answer, for the model
to fix), the event that announces it, and answering calls a saved history left open."""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tui_agent.core.events import Event, ServerLog, TaskUpdate, ToolCallStarted, ToolProgress
from tui_agent.core.llm import ToolCallRequest
from tui_agent.core.session import Compaction, SessionWriter
from tui_agent.tools.news import LogLine, Progress, TaskNews
from tui_agent.tools.results import CHARS_PER_TOKEN, cap
from tui_agent.tools.spec import ToolOutcome, ToolSpec
from tui_agent.tools.text import clean

MAX_LISTED_TOOLS = 40


@dataclass(slots=True)
class Call:
    """One tool call of a reply on its way through validation, the gate and the tool."""

    request: ToolCallRequest
    spec: ToolSpec | None = None
    arguments: dict[str, Any] | None = None
    outcome: ToolOutcome | None = None


def prepare(request: ToolCallRequest, offered: dict[str, ToolSpec]) -> Call:
    """Resolve the tool and parse the arguments; a problem becomes the call's outcome."""
    call = Call(request, offered.get(request.name))
    if call.spec is None:
        names = sorted(offered)
        closest = closest_names(request.name, names)
        near = f" The closest: {', '.join(closest)}." if closest else ""
        listed = ", ".join(names[:MAX_LISTED_TOOLS]) or "none"
        more = f" and {len(names) - MAX_LISTED_TOOLS} more" if len(names) > MAX_LISTED_TOOLS \
            else ""
        call.outcome = ToolOutcome(f"error: there is no tool named '{clean(request.name)}'."
                                   f"{near} Available tools: {listed}{more}.", is_error=True)
        return call
    raw = request.arguments.strip() or "{}"
    try:
        args = json.loads(raw)
    except ValueError as exc:
        call.outcome = ToolOutcome(
            f"error: the arguments for '{request.name}' are not valid JSON ({exc}). "
            "Call the tool again with a JSON object that matches its parameters.",
            is_error=True)
        return call
    if not isinstance(args, dict):
        call.outcome = ToolOutcome(
            f"error: the arguments for '{request.name}' must be a JSON object, "
            f"not {type(args).__name__}. Call the tool again with an object.", is_error=True)
        return call
    call.arguments = args
    return call


def closest_names(name: str, names: Sequence[str], most: int = 5) -> list[str]:
    """The real tool names nearest a made-up one: the same tool on another server (the
    part after ``__``) first, then the ones spelled most alike."""
    bare = name.rsplit("__", 1)[-1]
    same_tool = [n for n in names if n.rsplit("__", 1)[-1] == bare]
    alike = difflib.get_close_matches(name, names, n=most, cutoff=0.5)
    alike += difflib.get_close_matches(bare, [n.rsplit("__", 1)[-1] for n in names],
                                       n=most, cutoff=0.6)
    spelled = [n for a in alike for n in names if n == a or n.rsplit("__", 1)[-1] == a]
    return list(dict.fromkeys(same_tool + spelled))[:most]


def started(call: Call) -> ToolCallStarted:
    """The event of a call; ``server`` is None for a tool that does not exist."""
    spec, req = call.spec, call.request
    shown = call.arguments if call.arguments is not None else (
        {"(unparsed)": req.arguments} if req.arguments.strip() else {})
    return ToolCallStarted(req.id, req.name, spec.server if spec else None,
                           spec.tool if spec else req.name, shown)


def resumed(history: Sequence[dict[str, Any]], compaction: Compaction | None,
            added: list[int]) -> tuple[list[dict[str, Any]], int]:
    """A saved history, repaired on each side of its compaction (so the compacted part
    ends where the file says), and the index of its first message read verbatim; the
    indices of the messages repair added are appended to ``added``."""
    cut = min(compaction.replaces, len(history)) if compaction else 0
    messages = repair_history(history[:cut], added)
    start = len(messages)
    later: list[int] = []
    messages += repair_history(history[cut:], later)
    added += [start + i for i in later]
    return messages, start


def capped(outcome: ToolOutcome, limit: int, session: SessionWriter | None,
           call_id: str) -> ToolOutcome:
    """``outcome`` cut to ``limit`` tokens, the whole of it kept beside the session.

    The structured value is let go: only a script reads it (:mod:`.scripts`), and the
    call's outcome lives until the turn's last call ends, so with it each of a reply's
    big results would stay in memory until then."""
    if len(outcome.text) <= limit * CHARS_PER_TOKEN:
        return replace(outcome, value=None) if outcome.value is not None else outcome
    saved = None
    if session is not None:
        with contextlib.suppress(OSError):
            saved = session.save_result(call_id, outcome.text)
    return replace(outcome, text=cap(outcome.text, limit, saved), value=None)


def repair_history(messages: Sequence[dict[str, Any]], added: list[int] | None = None
                   ) -> list[dict[str, Any]]:
    """A copy of ``messages`` in which every assistant tool call has an answer.

    A crash between a reply and its tool results leaves calls unanswered, which
    providers reject; they are answered as not run, right after their reply (their
    indices are appended to ``added``: they are not in the session file)."""
    out: list[dict[str, Any]] = []
    waiting: list[str] = []

    def close_waiting() -> None:
        for call_id in waiting:
            if added is not None:
                added.append(len(out))
            out.append({"role": "tool", "tool_call_id": call_id,
                        "content": "not run: the session ended before this call finished"})
        waiting.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool" and message.get("tool_call_id") in waiting:
            waiting.remove(message["tool_call_id"])
        elif role == "tool":
            continue  # an answer to nothing would be rejected too
        else:
            close_waiting()
        out.append(dict(message))
        if role == "assistant":
            waiting = [c.get("id", "") for c in message.get("tool_calls") or []]
    close_waiting()
    return out


def news_to(call_id: str, emit: Callable[[Event], None]
            ) -> Callable[[Progress | LogLine | TaskNews], None]:
    """What a server tells during call ``call_id``, as the turn's events."""
    def told(news: Progress | LogLine | TaskNews) -> None:
        if isinstance(news, Progress):
            emit(ToolProgress(call_id, news.progress, news.total, news.message))
        elif isinstance(news, TaskNews):
            emit(TaskUpdate(call_id, news.task_id, news.status, news.message))
        else:
            emit(ServerLog(news.server, news.level, news.text, news.logger, call_id))

    return told

