"""What a sub-agent shares with its parent, seen through its own eyes: the tools its file
names (:func:`tool_view`), the parent's gate with the question saying who asks
(:class:`AskingAs`), and the parent's hooks for its tool calls and its end
(:func:`tool_hooks`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from tui_agent.core.hooks import HookResult, Hooks
from tui_agent.core.hooks.runner import SessionFacts
from tui_agent.core.permissions import Decision, Gate, PendingCall
from tui_agent.core.permissions.names import rule_name
from tui_agent.tools.spec import ToolSpec

ToolView = Callable[[ToolSpec], bool]
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "Notification"})
"""The hook events a sub-agent fires as the parent would: those of its tool calls (and the
notification that a person is asked). Its task is not the person's prompt (no
``UserPromptSubmit``: the parent's turn fires it), and its end is ``SubagentStop``, not
``Stop`` (:class:`ToolHooks`)."""


def names_of(spec: ToolSpec) -> tuple[str, ...]:
    """The names a glob may match a tool by: as the model sees it (``time__now``,
    ``agent``), ``server__tool``, and as rules and hooks name it (``mcp__time__now``)."""
    return (spec.name, f"{spec.server}__{spec.tool}", rule_name(spec.server, spec.tool))


def matches(globs: Iterable[str], spec: ToolSpec) -> bool:
    names = names_of(spec)
    return any(fnmatchcase(name, glob) for glob in globs for name in names)


def tool_view(tools: Sequence[str] | None, disallowed: Sequence[str] = ()) -> ToolView | None:
    """Which tools an agent gets: those ``tools`` match (None: all), less those
    ``disallowed`` match. None when it gets every tool."""
    if tools is None and not disallowed:
        return None

    def offered(spec: ToolSpec) -> bool:
        return (tools is None or matches(tools, spec)) and not matches(disallowed, spec)

    return offered


def within(outer: ToolView | None, inner: ToolView | None) -> ToolView | None:
    """A sub-agent's view inside its parent's: a tool it gets must be one the parent got
    too (a sub-agent's own sub-agent never reaches what its file left out)."""
    if outer is None or inner is None:
        return inner if outer is None else outer

    def offered(spec: ToolSpec) -> bool:
        return outer(spec) and inner(spec)

    return offered


class AskingAs:
    """The parent's gate, each question saying which sub-agent asks."""

    def __init__(self, gate: Gate, who: str, call_id: str) -> None:
        self.gate = gate
        self.who = who
        self.call_id = call_id

    @property
    def asks_person(self) -> bool:
        return self.gate.asks_person

    async def decide(self, call: PendingCall) -> Decision:
        if call.agent is None:  # a sub-agent's own sub-agent already said who it is
            call = dataclasses.replace(call, agent=self.who, agent_id=self.call_id)
        return await self.gate.decide(call)


@dataclasses.dataclass
class Whose:
    """Which sub-agent fires the hooks, as Claude Code's input names it: its id (the
    parent's ``agent`` call id), its type (the agent's name, what the ``SubagentStop``
    matcher matches), its transcript (``agent_transcript_path``: empty when none is
    written), and the parent's session (``session_id`` and ``transcript_path`` are the
    main conversation's, as Claude Code sends them; None: the sub-agent's own)."""

    agent_id: str
    agent_type: str
    transcript: str = ""
    session: SessionFacts | None = None


class ToolHooks(Hooks):
    """The parent's hooks, for a sub-agent: :data:`TOOL_EVENTS` fire, and the end of its
    turn (the loop's ``Stop``) fires ``SubagentStop``: a hook that blocks it (exit 2 or
    ``decision: "block"``) keeps the sub-agent working, its reason the next instruction."""

    def __init__(self, hooks: Hooks, whose: Whose) -> None:
        super().__init__(hooks.config, hooks.cwd, hooks.project_dir, hooks.env)
        self.whose = whose

    def wants(self, event: str, subject: str | None = None) -> bool:
        if event == "Stop":
            return super().wants("SubagentStop", self.whose.agent_type)
        return (event in TOOL_EVENTS or event == "SubagentStart") and \
            super().wants(event, subject)

    async def fire(self, event: str, facts: SessionFacts, fields: Mapping[str, Any],
                   subject: str | None = None) -> HookResult:
        facts = self.whose.session or facts
        if event == "Stop":
            return await super().fire("SubagentStop", facts, {
                **fields, "agent_id": self.whose.agent_id,
                "agent_type": self.whose.agent_type,
                "agent_transcript_path": self.whose.transcript})
        if event not in TOOL_EVENTS and event != "SubagentStart":  # its own sub-agents'
            return HookResult()
        return await super().fire(event, facts, fields, subject)


def tool_hooks(hooks: Hooks | None, whose: Whose) -> Hooks | None:
    """The parent's ``hooks`` as sub-agent ``whose`` fires them (None: it has none)."""
    if hooks is None:
        return None
    return ToolHooks(hooks, whose)
