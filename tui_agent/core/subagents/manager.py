"""The sub-agents of one conversation: which agents there are (the built-in ``general``
first, then the files'), the ``agent`` tool that starts them, how many run at once
(``[agents] max_parallel``: the others wait, and say so), how deep they nest
(``[agents] max_depth``: a sub-agent at that depth has no ``agent`` tool), and stopping one
(:meth:`Subagents.stop`). One run is :mod:`.run`'s (:func:`~.run.run_agent`); the child
:class:`~tui_agent.core.agent.Agent` itself is made by the factory the wiring gives
(:class:`ChildParts` in, :class:`Child` out), so the
model, its settings and the system prompt's environment part come from the settings the
way the parent's did.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tui_agent.config.models import AgentSettings, AgentsSettings
from tui_agent.core.diffs import Scopes
from tui_agent.core.events import Event, Usage
from tui_agent.core.hooks import HookResult, Hooks, SessionFacts
from tui_agent.core.llm import ChatModel
from tui_agent.core.permissions import Gate, Policy
from tui_agent.core.scripts import CodeMode, Emit
from tui_agent.core.session import SessionWriter
from tui_agent.core.session.calls import SavedAgent
from tui_agent.core.subagents.definitions import GENERAL, agent_spec
from tui_agent.core.subagents.view import ToolView
from tui_agent.custom.agents import AgentDef, AgentProblem
from tui_agent.tools.spec import ToolOutcome, ToolSource, ToolSpec


class Agent(Protocol):
    """What sub-agents read of an :class:`~tui_agent.core.agent.Agent` (a parent's parts
    to share, a child's turn and what it left): this package is below the loop's."""

    @property
    def llm(self) -> ChatModel: ...
    @property
    def tools(self) -> ToolSource: ...
    @property
    def gate(self) -> Gate: ...
    @property
    def policy(self) -> Policy: ...
    @property
    def hooks(self) -> Hooks | None: ...
    @property
    def settings(self) -> AgentSettings: ...
    @property
    def session(self) -> SessionWriter | None: ...
    @property
    def code_mode(self) -> CodeMode | None: ...
    @property
    def scopes(self) -> Scopes | None: ...
    @property
    def messages(self) -> list[dict[str, Any]]: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def tool_view(self) -> Callable[[ToolSpec], bool] | None: ...

    def run_turn(self, text: str) -> AsyncGenerator[Event, None]: ...
    def facts(self) -> SessionFacts: ...
    def record(self, message: dict[str, Any]) -> None: ...
    async def fire(self, event: str, fields: Mapping[str, Any], emit: Emit,
                   subject: str | None = None) -> HookResult: ...


@dataclass(frozen=True)
class ChildParts:
    """What the core decided for a sub-agent, for the factory to build it with: its
    definition, the parent's tools and the view of them it gets, the parent's gate (asking
    as it), policy and hooks (its tool calls'), its loop settings (``max_depth`` = its
    turns), its own :class:`Subagents` (one level deeper) and where its transcript goes
    (None: the parent keeps no session file)."""

    definition: AgentDef
    call_id: str
    parent: Agent
    gate: Gate
    hooks: Hooks | None
    settings: AgentSettings
    view: ToolView | None
    subagents: Subagents
    transcript: Path | None


@dataclass(frozen=True)
class Child:
    """A built sub-agent: the agent, its model's name, and notes to show (an alias with
    no ``[models]`` table runs on the parent's model, and says so)."""

    agent: Agent
    model: str
    notes: tuple[str, ...] = ()


ChildFactory = Callable[[ChildParts], Child]


@dataclass
class Running:
    """A sub-agent running now (its turn's task) or waiting for a slot (the task of the
    call that waits), and whether the person stopped it."""

    task: asyncio.Task[None]
    stopped: bool = False


@dataclass
class Tree:
    """What a conversation's sub-agents share at every depth: the running ones, by the
    id of the call that started each (so a sub-agent's own can be stopped too)."""

    running: dict[str, Running] = field(default_factory=dict)


class Subagents:
    """The sub-agents one :class:`~tui_agent.core.agent.Agent` may start (none without a
    ``factory``: a bare agent has no ``agent`` tool)."""

    def __init__(self, definitions: Sequence[AgentDef] = (),
                 problems: Sequence[AgentProblem] = (), factory: ChildFactory | None = None,
                 limits: AgentsSettings | None = None, depth: int = 0,
                 tree: Tree | None = None) -> None:
        files = [d for d in definitions if d.name]
        general = next((d for d in files if d.name.lower() == GENERAL.name), GENERAL)
        self._definitions = (general, *(d for d in files if d is not general))
        self.problems: Sequence[AgentProblem] = tuple(problems)
        self.factory = factory
        self.limits = limits or AgentsSettings()
        self.depth = depth
        self.tree = tree or Tree()
        self.slots = asyncio.Semaphore(self.limits.max_parallel)
        self.active = 0
        """Sub-agents of this level running now (the others wait for a slot)."""
        self.ended: dict[str, SavedAgent] = {}
        """How each sub-agent started by this agent ended, by call id (for the session)."""
        self.answers: dict[str, ToolOutcome] = {}
        """What the parent's model reads of a sub-agent stopped with the parent's turn."""
        self.turn_usage = Usage()
        self._spec: ToolSpec | None = None

    def definitions(self) -> Sequence[AgentDef]:
        """The agents on offer: the built-in ``general`` first (or a file's of that name),
        then the files'."""
        return self._definitions

    def find(self, name: str) -> AgentDef | None:
        wanted = name.strip().lower()
        return next((d for d in self._definitions if d.name.lower() == wanted), None)

    def offered(self) -> bool:
        """Whether the ``agent`` tool is offered: there is a factory, and this level is
        above ``max_depth``."""
        return self.factory is not None and self.depth < self.limits.max_depth

    def spec(self) -> ToolSpec:
        if self._spec is None:
            self._spec = agent_spec(self._definitions)
        return self._spec

    def child(self) -> Subagents:
        """The sub-agents a sub-agent of this one may start (one level deeper)."""
        return Subagents(self._definitions, self.problems, self.factory, self.limits,
                         self.depth + 1, self.tree)

    def fresh(self) -> Subagents:
        """The same agents for a new conversation (nothing running, nothing ended)."""
        return Subagents(self._definitions, self.problems, self.factory, self.limits,
                         self.depth)

    def stop(self, call_id: str) -> bool:
        """Stop the sub-agent of call ``call_id`` (at any depth): it ends ``stopped`` and
        its parent's model reads what it had. False when none runs under that id."""
        running = self.tree.running.get(call_id)
        if running is None or running.task.done():
            return False
        running.stopped = True
        running.task.cancel()
        return True

    def take_usage(self) -> Usage:
        """The usage of the sub-agents that ended since the last call (the turn's)."""
        usage, self.turn_usage = self.turn_usage, Usage()
        return usage
