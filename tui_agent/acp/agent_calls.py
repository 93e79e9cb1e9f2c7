"""A sub-agent over ACP: the parent's ``agent`` call is one tool call (kind ``think``,
titled with the agent's name and task) whose updates carry the sub-agent's progress (its
model, each tool it calls, its notes, and how it ended with tokens, cost and time); each
call the sub-agent makes is a tool call of its own, titled "for the agent NAME", under an
id of its own (``<agent call id>/<call id>``: a sub-agent's call ids are its model's and
may repeat the parent's). A sub-agent's streamed text and thinking are not sent: its final
reply is the ``agent`` call's result, which the editor shows when the call completes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp.helpers import text_block, tool_content, update_tool_call

from tui_agent.core.events import (
    AgentFinished,
    AgentStarted,
    ErrorOccurred,
    Event,
    Notice,
    ToolCallStarted,
    ToolResult,
)
from tui_agent.core.skills.tool import BUILTIN_SERVER
from tui_agent.core.subagents.definitions import AGENT_TOOL
from tui_agent.tools.text import clean, first_line

STEPS_SHOWN = 8
"""Lines of a sub-agent's progress its tool call shows (the latest ones)."""
TASK_CHARS = 80


def is_agent_call(server: str | None, tool: str) -> bool:
    return server == BUILTIN_SERVER and tool == AGENT_TOOL


def agent_title(arguments: dict[str, Any], name: str | None = None) -> str:
    """``agent explore: find where the config is read`` (the task's first line)."""
    who = name or arguments.get("agent") or "general"
    task = arguments.get("prompt")
    line = first_line(task) if isinstance(task, str) else ""
    more = "…" if len(line) > TASK_CHARS else ""
    return f"agent {clean(str(who))}" + (f": {line[:TASK_CHARS]}{more}" if line else "")


def nested_id(agent_id: str | None, call_id: str) -> str:
    """The ACP id of a call a sub-agent made (the id the permission question uses too)."""
    return f"{agent_id}/{call_id}" if agent_id else call_id


class AgentCalls:
    """The updates of sub-agents' events, for :class:`~tui_agent.acp.updates.Updates`
    (``plain``: how it shows a call's own update, given the id to use)."""

    def __init__(self, plain: Callable[[Event, str], list[Any]],
                 started: Callable[[ToolCallStarted, str, str], Any]) -> None:
        self._plain = plain
        self._started = started
        self._ids: dict[str, str] = {}
        """Each sub-agent's own tool call id, by its agent call's id."""
        self._steps: dict[str, list[str]] = {}

    def own(self, event: AgentStarted | AgentFinished) -> list[Any]:
        """The start or end of a sub-agent of the parent's own ``agent`` call."""
        if isinstance(event, AgentStarted):
            return [self._begin(event, event.id)]
        return [self._end(event)]

    def of(self, event: Event) -> list[Any]:
        """An event a sub-agent emitted (``event.agent`` set)."""
        tag = event.agent
        assert tag is not None
        match event:
            case AgentStarted():  # a sub-agent's own sub-agent
                return [self._begin(event, nested_id(tag.id, event.id))]
            case AgentFinished():
                return [self._end(event)]
            case ToolCallStarted():
                shown = self._started(event, nested_id(tag.id, event.id),
                                      f" (for the agent {clean(tag.name)})")
                return [shown, self._step(tag.id, f"→ {clean(event.name)}")]
            case ToolResult(is_error=True):
                return [*self._plain(event, nested_id(tag.id, event.id)),
                        self._step(tag.id, f"✗ {clean(event.text).strip()[:120]}")]
            case ErrorOccurred(message=message):
                return [self._step(tag.id, f"error: {clean(message)}")]
            case Notice(message=message):
                return [self._step(tag.id, f"note: {clean(message)}")]
        call_id = getattr(event, "id", None)
        return self._plain(event, nested_id(tag.id, call_id)) if isinstance(call_id, str) \
            else []

    def _begin(self, event: AgentStarted, call_id: str) -> Any:
        self._ids[event.id] = call_id
        self._steps[event.id] = [f"{clean(event.name)} on {clean(event.model)}"]
        return update_tool_call(
            call_id, title=agent_title({"prompt": event.task}, event.name), kind="think",
            status="in_progress", content=[tool_content(text_block(self._steps[event.id][0]))])

    def _step(self, agent_id: str, line: str) -> Any:
        steps = self._steps.setdefault(agent_id, [])
        steps.append(line)
        shown = "\n".join(steps[:1] + steps[1:][-STEPS_SHOWN:])
        return update_tool_call(self._ids.get(agent_id, agent_id), status="in_progress",
                                content=[tool_content(text_block(shown))])

    def _end(self, event: AgentFinished) -> Any:
        why = f": {clean(event.reason)}" if event.reason else ""
        tools = f"; tools: {', '.join(map(clean, event.tools))}" if event.tools else ""
        line = (f"{clean(event.name)} {event.status}{why} ({event.turns} turns, "
                f"{event.usage.spent_text()}, {event.duration:.1f} s{tools})")
        # The agent call's own result follows and says completed or failed.
        return update_tool_call(self._ids.get(event.id, event.id),
                                content=[tool_content(text_block(line))])
