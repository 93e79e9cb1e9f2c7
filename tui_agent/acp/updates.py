"""The core's events as ``session/update`` notifications, and a saved conversation
replayed the same way (``session/load``).

Text and thinking stream as ``agent_message_chunk`` / ``agent_thought_chunk`` (secrets
masked across pieces, control characters removed); a call is a ``tool_call`` (title, kind,
arguments, paths, and the diff of a file it writes) followed by ``tool_call_update``s as
the gate and the server answer. Chunks carry message ids (:mod:`.chunks`). Errors and
notices of the turn reach the editor as agent messages of their own, marked as
tui-agent's (ACP has no place of their own for them), never as thinking.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_tool_call,
)
from acp.schema import ToolCallLocation, ToolCallStatus

from tui_agent.acp.agent_calls import AgentCalls, agent_title, is_agent_call
from tui_agent.acp.chunks import MessageIds, agent_text, new_id, own_text, thought_text, user_text
from tui_agent.acp.kinds import kind_of, paths_of, title_of
from tui_agent.acp.shown import shown_change, shown_input
from tui_agent.core.diffs import FileChange, Scopes, change_of
from tui_agent.core.events import (
    AgentFinished,
    AgentStarted,
    ApprovalDecided,
    ErrorOccurred,
    Event,
    EventMasker,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallStarted,
    ToolProgress,
    ToolResult,
)
from tui_agent.core.permissions.modes import without_mode_note
from tui_agent.core.session import SavedCall
from tui_agent.core.subagents.definitions import AGENT_TOOL
from tui_agent.tools.text import StreamCleaner, clean

RESULT_CHARS = 20_000
"""Characters of a tool's result sent to the editor (the model gets its own cut)."""


class Updates:
    """One turn's events, as the updates to send (a list: an event may give none)."""

    def __init__(self, secrets: frozenset[str], cwd: Path, scopes: Scopes | None) -> None:
        self._mask = EventMasker(secrets)
        self._text, self._thought = StreamCleaner(), StreamCleaner()
        self.cwd, self.scopes = cwd, scopes
        self._agents = AgentCalls(self._call, self._started)
        self.ids = MessageIds()

    def __call__(self, event: Event) -> list[Any]:
        return [u for shown in self._mask(event) for u in self._one(shown)]

    def end(self) -> list[Any]:
        """What the masker and the cleaners still hold when the turn ends (a cancelled
        turn has no ``TurnDone`` to push it out): an unfinished escape sequence is dropped,
        text kept."""
        held = [u for shown in self._mask.flush() for u in self._one(shown)]
        thought, text = self._thought.flush(), self._text.flush()
        return held + ([thought_text(thought, self.ids.thought())] if thought else []) + \
            ([agent_text(text, self.ids.reply())] if text else [])

    def _one(self, event: Event) -> list[Any]:
        if event.agent is not None:  # a sub-agent's: shown on its agent call
            return self._agents.of(event)
        match event:
            case TextDelta(delta=delta):
                text = self._text.feed(delta)
                return [agent_text(text, self.ids.reply())] if text else []
            case ReasoningDelta(delta=delta):
                text = self._thought.feed(delta)
                return [thought_text(text, self.ids.thought())] if text else []
            case ToolCallStarted():
                self.ids.end()
                return [self._started(event)]
            case AgentStarted() | AgentFinished():
                return self._agents.own(event)
            case ErrorOccurred(message=message):
                return [*self._flush(), own_text(f"⚠ {clean(message)}\n", "error")]
            case Notice(message=message):
                return [*self._flush(), own_text(f"{clean(message)}\n")]
        call_id = getattr(event, "id", None)
        return self._call(event, call_id) if isinstance(call_id, str) else []

    def _flush(self) -> list[Any]:
        """The reply and thinking held back so far, sent before a message of tui-agent's
        own comes between (the reply's message ends there)."""
        thought, text = self._thought.flush(), self._text.flush()
        ids = (self.ids.thought(), self.ids.reply())
        self.ids.end()
        return ([thought_text(thought, ids[0])] if thought else []) + \
            ([agent_text(text, ids[1])] if text else [])

    def _call(self, event: Event, call_id: str) -> list[Any]:
        """The update of a call's approval, progress or result (``call_id``: the call's
        id as the editor knows it)."""
        match event:
            case ApprovalDecided(decision="denied", reason=reason):
                why = f"denied: {clean(reason)}" if reason else "denied"
                return [update_tool_call(call_id, status="failed",
                                         content=[tool_content(text_block(why))])]
            case ApprovalDecided():
                return [update_tool_call(call_id, status="in_progress")]
            case ToolProgress(progress=done, total=total, message=message):
                what = f"{done:g}/{total:g}" if total else f"{done:g}"
                note = f"{what}{f' {clean(message)}' if message else ''}"
                return [update_tool_call(call_id, status="in_progress",
                                         content=[tool_content(text_block(note))])]
            case ToolResult(is_error=failed, text=text):
                shown = clean(text[:RESULT_CHARS]) + ("…" if len(text) > RESULT_CHARS else "")
                return [update_tool_call(call_id, status="failed" if failed else "completed",
                                         content=[tool_content(text_block(shown))],
                                         raw_output=shown)]
        return []

    def _started(self, event: ToolCallStarted, call_id: str | None = None, whose: str = ""
                 ) -> Any:
        """A call's ``tool_call`` (``call_id``: its id as the editor knows it, default the
        event's; ``whose``: added to the title, for a sub-agent's call)."""
        content = []
        change = self._change(event)
        if change is not None:
            content.append(tool_diff_content(*shown_change(change, self._mask.secrets)))
        agent = is_agent_call(event.server, event.tool)
        title = agent_title(event.arguments) if agent else \
            title_of(event.name, event.server, event.tool, event.parent)
        return start_tool_call(
            call_id or event.id, title + whose,
            kind="think" if agent else kind_of(event.tool, event.arguments), status="pending",
            content=content or None,
            locations=[ToolCallLocation(path=p) for p in paths_of(event.arguments, self.cwd)],
            raw_input=shown_input(event.arguments, self._mask.secrets))

    def _change(self, event: ToolCallStarted) -> FileChange | None:
        scope = self.scopes(event.server) if self.scopes and event.server else None
        if scope is None:
            return None
        try:
            return change_of(event.tool, event.arguments, scope)
        except Exception:  # a diff is a courtesy; the call is still shown
            return None


def replay(messages: list[dict[str, Any]],
           calls: Mapping[str, SavedCall] | None = None) -> list[Any]:
    """A saved conversation as the updates that show it again: the user's words, the
    replies, each call and its result. ``calls`` (the session file's record, by call id)
    says how each call ended: a failed, denied or cancelled one replays as ``failed``, and
    a script's own calls follow its ``tool_call`` as tool calls of their own, titled as
    live ("called by the script …"). A call without a record (an older file) replays as
    ``completed``."""
    calls = calls or {}
    updates: list[Any] = []
    for message in messages:
        role, text = message.get("role"), _text_of(message.get("content"))
        if role == "user" and text:
            updates.append(user_text(clean(without_mode_note(text)), new_id()))
        elif role == "assistant":
            if text:
                updates.append(agent_text(clean(text), new_id()))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name = str(function.get("name", "?"))
                server, _, tool = name.partition("__")
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    arguments = {}
                args = arguments if isinstance(arguments, dict) else {}
                call_id = str(call.get("id"))
                saved = calls.get(call_id)
                if name == AGENT_TOOL or (saved and saved.agent):  # titled as live
                    title = agent_title(args, saved.agent.name if saved and saved.agent
                                        else None)
                    updates.append(start_tool_call(call_id, title, kind="think",
                                                   status=_status(saved), raw_input=args))
                    continue
                updates.append(start_tool_call(
                    call_id, title_of(name, server if tool else None, tool or name),
                    kind=kind_of(tool or name, args), status=_status(saved), raw_input=args))
                updates += [_nested(c, call_id) for c in (saved.calls if saved else ())]
        elif role == "tool" and message.get("tool_call_id"):
            call_id = str(message["tool_call_id"])
            updates.append(update_tool_call(
                call_id, status=_status(calls.get(call_id)),
                content=[tool_content(text_block(clean(text[:RESULT_CHARS])))]))
    return updates


def _status(saved: SavedCall | None) -> ToolCallStatus:
    """ACP's word for how a call ended (it has no denied or cancelled: both failed)."""
    return "completed" if saved is None or saved.status == "done" else "failed"


def _nested(call: SavedCall, parent: str) -> Any:
    """A call a script made, as its own tool call, ended as it ended."""
    if call.text:
        said = call.text
    elif call.status == "denied":
        said = f"denied: {call.reason}" if call.reason else "denied"
    else:
        said = call.status
    return start_tool_call(
        call.id, title_of(call.name, call.server, call.tool, parent),
        kind=kind_of(call.tool, call.arguments), status=_status(call),
        content=[tool_content(text_block(clean(said[:RESULT_CHARS])))],
        raw_input=call.arguments)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content
                         if isinstance(p, dict) and p.get("type") == "text")
    return ""
