"""Sub-agents from the settings: the agent files found (the user's, and a trusted
project's), and the factory that builds each sub-agent's child
:class:`~tui_agent.core.agent.Agent` the way the parent was built: its model's settings
through :meth:`Settings.model_for` (so ``[models."NAME"]`` applies), its system prompt
(the agent file's body, then the environment part tui-agent's own prompt has: date,
working directory, platform, git; no project memory, skills index or the parent's words),
and its own code mode where the parent's servers are in code mode.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tui_agent.config import Settings
from tui_agent.config.models import ModelSettings
from tui_agent.core.agent import Agent
from tui_agent.core.llm import LLM, ChatModel
from tui_agent.core.prompt import Environment, SystemPrompt
from tui_agent.core.scripts import CodeMode
from tui_agent.core.session import SessionWriter
from tui_agent.core.subagents import Child, ChildFactory, ChildParts, Subagents
from tui_agent.custom.agents import AgentDef, AgentProblem

CLAUDE_ALIASES = ("sonnet", "opus", "haiku")
"""Claude Code's model aliases: a ``[models."sonnet"]`` table says what one means here;
without one, the agent runs on the parent's model, and says so."""
ModelSettingsFor = Callable[[str], ModelSettings]


def child_model(settings: Settings, definition: AgentDef, parent: ChatModel,
                settings_for: ModelSettingsFor | None = None
                ) -> tuple[ModelSettings, list[str]]:
    """The settings ``definition``'s model runs with, and a note to show: its own model's
    (``settings_for``, default :meth:`Settings.model_for`), else the parent's, as the
    parent uses it; its ``reasoning_effort`` on top."""
    name, notes = definition.model, []
    if name in CLAUDE_ALIASES and name not in settings.config.models:
        notes.append(f"the agent '{definition.name}' asks for '{name}', Claude Code's alias: "
                     f"with no [models.\"{name}\"] table it runs on the parent's model, "
                     f"{parent.model}")
        name = None
    if name is None:
        own = getattr(parent, "settings", None)
        model = own if isinstance(own, ModelSettings) else settings.model_for(None)
    else:
        model = (settings_for or settings.model_for)(name)
    if definition.reasoning_effort is not None:
        model = model.model_copy(update={"reasoning_effort": definition.reasoning_effort})
    return model, notes


def child_factory(settings: Settings, cwd: Path | None = None,
                  settings_for: ModelSettingsFor | None = None) -> ChildFactory:
    """How the sub-agents of a run are built (``cwd``: where it runs)."""
    where = cwd or Path.cwd()

    def make(parts: ChildParts) -> Child:
        parent, definition = parts.parent, parts.definition
        model, notes = child_model(settings, definition, parent.llm, settings_for)
        session = None
        if parts.transcript is not None and parent.session is not None:
            parts.transcript.parent.mkdir(mode=0o700, exist_ok=True)
            session = SessionWriter.create(parts.transcript, {
                "model": model.name, "cwd": str(where), "agent": definition.name,
                "parent": parent.session.id, "call": parts.call_id},
                parent.session.secrets)
        code_mode = None
        if parent.code_mode is not None:
            code_mode = CodeMode(parent.code_mode.settings, settings.config.servers)
        child = Agent(LLM(model), getattr(parent.tools, "inner", parent.tools), parts.gate,
                      settings=parts.settings, policy=parent.policy, session=session,
                      prompt=SystemPrompt(own=definition.prompt,
                                          environment=Environment.here(where)),
                      code_mode=code_mode, scopes=parent.scopes, hooks=parts.hooks)
        child.subagents = parts.subagents
        child.tool_view = parts.view
        child.rounds_counted = True  # its card counts its tokens and cost as it runs
        return Child(child, model.name or "", tuple(notes))

    return make


def subagents(settings: Settings, cwd: Path | None = None,
              found: tuple[tuple[AgentDef, ...], tuple[AgentProblem, ...]] = ((), ()),
              settings_for: ModelSettingsFor | None = None) -> Subagents:
    """The sub-agents a conversation may start: ``general`` and the agents ``found``
    (:func:`agent_files`), within ``[agents]``."""
    return Subagents(found[0], found[1], child_factory(settings, cwd, settings_for),
                     settings.config.agents)


def agent_files(settings: Settings) -> tuple[tuple[AgentDef, ...], tuple[AgentProblem, ...]]:
    """The agent files of the user and (trusted) the project, read; blocking (the app
    calls it in a thread)."""
    from tui_agent.custom.agents.reader import load

    trusted = settings.project is not None and settings.held is None  # as build's
    files = load(settings.project.root if trusted and settings.project else None, os.environ)
    return files.found, files.problems


def local_agents(settings: Settings, agent: Agent, cwd: Path | None = None,
                 settings_for: ModelSettingsFor | None = None) -> None:
    """Give ``agent`` the agent files found (blocking: files are read)."""
    agent.subagents = subagents(settings, cwd, agent_files(settings), settings_for)
