"""One ``agent`` call: find the agent, build its child :class:`~tui_agent.core.agent.Agent`
through the wiring's factory, run one turn of it on the task, and answer the parent's
model with its final reply and the tools it called.

The child shares the parent's tools (through the view its file's ``tools`` and
``disallowedTools`` give), gate (the question says which agent asks), policy, mode and
hooks (those of its tool calls), so its calls pass exactly what the parent's would; it
shares nothing of the parent's conversation. Its events go out on the parent's stream
through the call's ``emit`` (as a code-mode script's calls do), each tagged with
``agent=AgentTag(call_id, name)`` where not tagged already (a sub-agent's own sub-agent's
carry theirs), framed by :class:`~tui_agent.core.events.AgentStarted` and
:class:`~tui_agent.core.events.AgentFinished` (its ``TurnDone`` becomes the latter). It
waits for a slot (``[agents] max_parallel``) and says so; it ends ``done``, ``failed``
(its model or its set-up failed), ``max_turns`` or ``stopped`` (:meth:`Subagents.stop`, or
the parent's turn cancelled), and whatever the ending the parent's model reads what it
had and why. Its transcript is a session file of its own beside the parent's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from contextlib import aclosing
from pathlib import Path
from typing import Any

from tui_agent.core.events import (
    AgentFinished,
    AgentStarted,
    AgentStatus,
    AgentTag,
    ErrorOccurred,
    Event,
    Notice,
    ToolCallStarted,
    TurnDone,
)
from tui_agent.core.scripts import Emit
from tui_agent.core.session.calls import SavedAgent
from tui_agent.core.session.records import SUBAGENT_START_CONTEXT
from tui_agent.core.subagents.manager import Agent, Child, ChildParts, Running, Subagents
from tui_agent.core.subagents.view import (
    AskingAs,
    Whose,
    matches,
    tool_hooks,
    tool_view,
    within,
)
from tui_agent.custom.agents import AgentDef
from tui_agent.tools.spec import ToolOutcome
from tui_agent.tools.text import clean

NOTHING = "(it had written nothing yet)"


@dataclasses.dataclass
class _State:
    """What one run saw of its child's events."""

    tools: list[str] = dataclasses.field(default_factory=list)
    done: TurnDone | None = None
    error: str = ""


def _problem(text: str) -> ToolOutcome:
    return ToolOutcome(f"error: {text}", is_error=True)


def _task_of(subagents: Subagents, arguments: dict[str, Any]) -> tuple[AgentDef, str] | str:
    """The agent and the task a call names, or what is wrong with it."""
    name, prompt = arguments.get("agent"), arguments.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return 'agent takes {"prompt": "<the task>"} and optionally "agent": "<name>"'
    if name is not None and not isinstance(name, str):
        return '"agent" must be the name of an agent, as text'
    found = subagents.find(name or "general")
    if found is None:
        names = ", ".join(d.name for d in subagents.definitions())
        return f"no agent named '{clean(str(name))[:100]}'. The agents are: {names}"
    return found, prompt


START_CONTEXT = SUBAGENT_START_CONTEXT
"""What comes before the hooks' words in the message that carries them to the sub-agent."""


def transcript_path(parent: Agent, call_id: str) -> Path | None:
    """Where the sub-agent of ``call_id`` keeps its transcript: ``<parent stem>.agents/
    <call id>.jsonl`` beside the parent's session file (None: the parent keeps none)."""
    if parent.session is None:
        return None
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)[:100] or "call"
    path = parent.session.path
    folder = path.parent / f"{path.stem}.agents"
    found, n = folder / f"{safe}.jsonl", 1
    while found.exists():  # a model may give two calls the same id (another turn's too)
        n += 1
        found = folder / f"{safe}-{n}.jsonl"
    return found


def _build(subagents: Subagents, parent: Agent, call_id: str, definition: AgentDef
           ) -> Child | str:
    """The child agent, or why it cannot be made (its tools match none on offer, its
    model's settings are broken)."""
    view = within(parent.tool_view, tool_view(definition.tools, definition.disallowed))
    deeper = subagents.child()
    if definition.tools:  # an empty list asks for no tools: nothing to find
        inner = getattr(parent.tools, "inner", parent.tools)
        candidates = [s for s in inner.specs()
                      if parent.tool_view is None or parent.tool_view(s)]
        candidates += [deeper.spec()] if deeper.offered() else []
        if not any(matches(definition.tools, s) for s in candidates):
            globs = ", ".join(definition.tools)
            return (f"the agent '{definition.name}' has no tool to work with: its tools "
                    f"({globs}) match none of the tools on offer"
                    + (f" (defined in {definition.file})" if definition.file else ""))
    settings = parent.settings.model_copy(update={
        "max_depth": definition.max_turns or subagents.limits.max_turns})
    transcript = transcript_path(parent, call_id)
    whose = Whose(call_id, definition.name, str(transcript or ""), parent.facts())
    parts = ChildParts(definition, call_id, parent,
                       AskingAs(parent.gate, f"{definition.name} ({call_id})", call_id),
                       tool_hooks(parent.hooks, whose), settings, view, deeper, transcript)
    assert subagents.factory is not None
    try:
        return subagents.factory(parts)
    except Exception as exc:  # a broken [models] table, a session file that cannot open
        return (f"the agent '{definition.name}' could not start: {type(exc).__name__}: "
                f"{clean(str(exc))}")


async def run_agent(subagents: Subagents, parent: Agent, call_id: str,
                    arguments: dict[str, Any], emit: Emit) -> ToolOutcome:
    """Run the ``agent`` call ``call_id`` of ``parent`` (see the module's docstring)."""
    found = _task_of(subagents, arguments)
    if isinstance(found, str):
        return _problem(found)
    definition, task = found
    built = _build(subagents, parent, call_id, definition)
    if isinstance(built, str):
        return _problem(built)
    child = built.agent
    tag = AgentTag(call_id, definition.name)
    emit(AgentStarted(call_id, definition.name, built.model, task,
                      clean(definition.description)))
    for note in built.notes:
        emit(Notice(clean(note), agent=tag))
    state = _State()
    started = time.monotonic()
    status: AgentStatus = "stopped"
    me = asyncio.current_task()
    waiting = Running(me) if me is not None and subagents.slots.locked() else None
    try:
        if waiting is not None:  # stop() may end it before it starts
            subagents.tree.running[call_id] = waiting
            emit(Notice(f"waiting: {subagents.active} sub-agents are running "
                        f"([agents] max_parallel = {subagents.limits.max_parallel})", agent=tag))
        try:
            async with subagents.slots:
                subagents.active += 1
                started = time.monotonic()
                try:
                    await _start_hooks(parent, child, call_id, definition.name, tag, emit)
                    status = await _drive(subagents, child, call_id, task, tag, state, emit)
                finally:
                    subagents.active -= 1
        except asyncio.CancelledError:
            if waiting is None or not waiting.stopped or subagents.tree.running.get(
                    call_id) is not waiting or me is None or me.uncancel() > 0:
                raise  # the parent's turn was cancelled
    finally:  # a cancelled parent turn too: its usage counted, its ending kept
        if waiting is not None and subagents.tree.running.get(call_id) is waiting:
            del subagents.tree.running[call_id]
        outcome = _finish(subagents, child, built, definition, call_id, status, state,
                          time.monotonic() - started, emit)
        if child.session is not None:
            child.session.close()
    return outcome


async def _start_hooks(parent: Agent, child: Agent, call_id: str, name: str, tag: AgentTag,
                       emit: Emit) -> None:
    """``SubagentStart`` (matched on the agent's name): what its hooks add
    (``additionalContext``) is the sub-agent's before its task, as Claude Code gives it.
    It cannot stop the sub-agent: a hook that blocks (exit 2) is only heard."""
    def tagged(event: Event) -> None:
        emit(dataclasses.replace(event, agent=tag))

    said = await parent.fire("SubagentStart", {"agent_id": call_id, "agent_type": name},
                             tagged)
    if said.blocked and said.reason:
        tagged(Notice(clean(f"a SubagentStart hook said: {said.reason}")))
    if said.context:
        child.record({"role": "user", "content": f"{START_CONTEXT}\n{said.context}"})


async def _drive(subagents: Subagents, child: Agent, call_id: str, task: str,
                 tag: AgentTag, state: _State, emit: Emit) -> AgentStatus:
    """Run the child's turn in a task of its own (what :meth:`Subagents.stop` cancels);
    the status it ended with. The parent's cancellation goes through."""
    async def turn() -> None:
        async with aclosing(child.run_turn(task)) as events:
            async for event in events:
                _saw(event, state)
                if not isinstance(event, TurnDone):
                    emit(event if event.agent is not None
                         else dataclasses.replace(event, agent=tag))

    running = Running(asyncio.create_task(turn(), name=f"agent {call_id}"))
    subagents.tree.running[call_id] = running
    try:
        await running.task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if not running.stopped or (current is not None and current.cancelling()):
            raise
        return "stopped"
    finally:
        subagents.tree.running.pop(call_id, None)
    done = state.done
    if done is None or done.reason == "cancelled":
        return "stopped"
    endings: dict[str, AgentStatus] = {"end": "done", "max_tokens": "done",
                                       "max_depth": "max_turns"}
    return endings.get(done.reason, "failed")


def _saw(event: Event, state: _State) -> None:
    if event.agent is not None:
        return  # a sub-agent's own sub-agent's: its card says
    if isinstance(event, ToolCallStarted) and event.name not in state.tools:
        state.tools.append(event.name)
    elif isinstance(event, ErrorOccurred):
        state.error = event.message
    elif isinstance(event, TurnDone):
        state.done = event


def _finish(subagents: Subagents, child: Agent, built: Child, definition: AgentDef,
            call_id: str, status: AgentStatus, state: _State, took: float,
            emit: Emit) -> ToolOutcome:
    """Emit the ending, keep it for the session, count its usage in the parent's turn;
    the parent model's answer."""
    turns = sum(1 for m in child.messages if m.get("role") == "assistant")
    reason = _reason(status, state, child.settings.max_depth)
    usage = child.usage
    tools = tuple(state.tools)
    emit(AgentFinished(call_id, definition.name, status, usage, round(took, 3), turns,
                       tools, reason))
    file = ""
    if child.session is not None and child.session.path.exists():
        file = os.path.relpath(child.session.path, child.session.path.parent.parent)
    subagents.ended[call_id] = SavedAgent(definition.name, built.model, status, usage,
                                          round(took, 3), turns, tools, file, reason)
    subagents.turn_usage = subagents.turn_usage + usage
    outcome = _answer(definition.name, status, reason, _last_reply(child), tools)
    subagents.answers[call_id] = outcome
    return outcome


def _reason(status: AgentStatus, state: _State, max_turns: int) -> str:
    if status == "max_turns":
        return (f"it was still calling tools after {max_turns} model round trips "
                f"(max_turns = {max_turns})")
    if status == "stopped":
        return "stopped before it finished"
    if status == "failed":
        return state.error or f"its turn ended: {state.done.reason if state.done else '?'}"
    return ""


def _last_reply(child: Agent) -> str:
    """The child's last words: its last assistant message with text."""
    for message in reversed(child.messages):
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, str) and content.strip():
            return content.strip()
    return ""


def _answer(name: str, status: AgentStatus, reason: str, reply: str,
            tools: tuple[str, ...]) -> ToolOutcome:
    """What the parent's model reads: the sub-agent's final reply and one line of the
    tools it called; when it did not finish, why, and what it had."""
    called = (f"[the agent '{name}' called: {', '.join(tools)}]" if tools
              else f"[the agent '{name}' called no tools]")
    if status == "done":
        return ToolOutcome(f"{reply or '(it answered with no text)'}\n\n{called}")
    words = {"failed": "failed", "max_turns": "hit its max_turns",
             "stopped": "was stopped"}[status]
    return ToolOutcome(f"The agent '{name}' {words}: {reason}. What it had:\n"
                       f"{reply or NOTHING}\n\n{called}", is_error=True)
