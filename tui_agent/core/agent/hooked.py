"""Where the loop fires the hooks (:mod:`tui_agent.core.hooks`): ``PreToolUse`` before the
policy's question of every call (the model's and each call inside a code-mode script),
``PostToolUse``/``PostToolUseFailure`` after it, and the session and turn events the loop
and the front ends fire through :meth:`Hooked.fire`.

A ``PreToolUse`` hook's answer meets the policy's as Claude Code's does: a deny refuses the
call (the reason goes to the model), an ask puts the question to the person (with the
reason), an allow runs the call without asking unless a deny denies it or something asks
outright (:attr:`~tui_agent.core.permissions.Judgement.by` set, or ``firm``); its
``updatedInput`` replaces the arguments before the policy judges them. ``continue: false``
from any hook stops the turn once the current step is done, its ``stopReason`` shown.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import Any

from tui_agent.core.events import Event, Notice, Usage
from tui_agent.core.hooks import HookResult, Hooks, SessionFacts
from tui_agent.core.hooks.pre_tool import PreTool
from tui_agent.core.permissions import Policy
from tui_agent.core.permissions.names import rule_name
from tui_agent.core.scripts import Emit
from tui_agent.core.session import SavedCall, SessionWriter
from tui_agent.core.session.records import SESSION_START_CONTEXT
from tui_agent.tools.spec import ToolOutcome, ToolSpec
from tui_agent.tools.text import clean


class Hooked:
    """The hook half of :class:`~tui_agent.core.agent.Agent` (its parts, as the agent
    sets them)."""

    hooks: Hooks | None
    policy: Policy
    session: SessionWriter | None
    conversation_id: str
    halted: str | None
    held: list[dict[str, Any]]
    """A ``SessionStart`` hook's words, waiting for the first prompt."""
    """Set by a hook's ``continue: false``: the turn stops, with this said."""
    _background: set[asyncio.Task[HookResult]]

    def facts(self) -> SessionFacts:
        return SessionFacts(
            lambda: self.session.id if self.session is not None else self.conversation_id,
            lambda: str(self.session.path) if self.session is not None else "",
            lambda: self.policy.mode)

    async def fire(self, event: str, fields: Mapping[str, Any], emit: Emit,
                   subject: str | None = None) -> HookResult:
        """Run ``event``'s hooks; their warnings and messages go out as notices, and a
        ``continue: false`` halts the turn."""
        if self.hooks is None:
            return HookResult()
        result = await self.hooks.fire(event, self.facts(), fields, subject)
        for note in result.notes():
            emit(Notice(note))
        stopped = result.stopped
        if stopped is not None:
            self.halted = stopped.stop_reason or f"a {event} hook stopped the turn"
        return result

    def fire_and_forget(self, event: str, fields: Mapping[str, Any]) -> None:
        """Start ``event``'s hooks without waiting (``Notification``: the person is being
        asked meanwhile); their answers are not read."""
        if self.hooks is None or not self.hooks.wants(event, fields.get("notification_type")):
            return
        task = asyncio.create_task(self.hooks.fire(event, self.facts(), fields))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def pre_tool(self, spec: ToolSpec, call_id: str, arguments: dict[str, Any],
                       emit: Emit) -> PreTool:
        if self.hooks is None or not self.hooks.wants("PreToolUse", rule_name(
                spec.server, spec.tool)):
            return PreTool(arguments)
        result = await self.fire("PreToolUse", {
            "tool_name": rule_name(spec.server, spec.tool), "tool_input": arguments,
            "tool_use_id": call_id}, emit)
        if result.stopped is not None:  # continue: false: this call does not run either
            result = HookResult((*result.answers, dataclasses.replace(
                result.stopped, decision="deny", reason=self.halted or "")))
        updated = result.updated_input
        return PreTool(updated if updated is not None else arguments, result)

    async def post_tool(self, spec: ToolSpec, call_id: str, arguments: dict[str, Any],
                        outcome: ToolOutcome, emit: Emit) -> ToolOutcome:
        """``PostToolUse`` (or ``PostToolUseFailure``) on a finished call: a block's reason
        and any context are added to what the model reads of the result."""
        event = "PostToolUseFailure" if outcome.is_error else "PostToolUse"
        name = rule_name(spec.server, spec.tool)
        if self.hooks is None or not self.hooks.wants(event, name):
            return outcome
        fields: dict[str, Any] = {"tool_name": name, "tool_input": arguments,
                                  "tool_use_id": call_id}
        fields["error" if outcome.is_error else "tool_response"] = outcome.text
        result = await self.fire(event, fields, emit)
        said = [f"[{event} hook] {r}" for r in (result.reason if result.blocked else "",
                                                 result.context) if r]
        if not said:
            return outcome
        return dataclasses.replace(outcome, text=outcome.text + "\n\n" + "\n".join(said))

    async def session_start(self, source: str) -> list[Event]:
        """``SessionStart`` (``source``: startup, resume, clear, compact): what its hooks
        add (their plain output or ``additionalContext``) joins the conversation for the
        model. Returns the notices to show."""
        heard: list[Event] = []
        said = await self.fire("SessionStart", {"source": source}, heard.append)
        if said.context:
            context = {"role": "user", "content": f"{START_CONTEXT}\n{said.context}"}
            if source == "compact":  # a turn may be under way: its next request reads it
                self.record(context)
            else:  # with the first prompt: a session nobody says anything in stays blank
                self.held.append(context)
        return heard

    def record_held(self) -> None:
        """Record what ``SessionStart`` held (before the prompt that is about to be)."""
        held, self.held = self.held, []
        for message in held:
            self.record(message)

    async def pre_compact(self, trigger: str, instructions: str, emit: Emit) -> bool:
        """``PreCompact`` (``trigger``: manual, auto); True when a hook blocks it (the
        conversation then goes on uncompacted, with the reason shown)."""
        said = await self.fire("PreCompact", {"trigger": trigger,
                                              "custom_instructions": instructions}, emit)
        if said.blocked:
            emit(Notice(clean("not compacted: a PreCompact hook blocked it"
                              + (f": {said.reason}" if said.reason else ""))))
        return said.blocked

    async def session_end(self, reason: str) -> list[Event]:
        """``SessionEnd`` (``reason``: clear, logout, prompt_input_exit, other), waited for
        at most :data:`SESSION_END_WAIT` seconds (quitting must not hang on a hook: one
        still running then is killed and named)."""
        heard: list[Event] = []
        try:
            async with asyncio.timeout(SESSION_END_WAIT):
                await self.fire("SessionEnd", {"reason": reason}, heard.append)
        except TimeoutError:
            heard.append(Notice(f"SessionEnd hooks still running after {SESSION_END_WAIT:g} "
                                "s were stopped"))
        return heard

    def record(self, message: dict[str, Any], *, incomplete: bool = False,
               usage: Usage | None = None, sync: bool = True,
               call: SavedCall | None = None) -> None:
        raise NotImplementedError  # the agent's: the conversation and its session file


START_CONTEXT = SESSION_START_CONTEXT
SESSION_END_WAIT = 10.0
"""Seconds the end of a session waits for its ``SessionEnd`` hooks."""
