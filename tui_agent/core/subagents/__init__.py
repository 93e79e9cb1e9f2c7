"""Sub-agents: the built-in ``agent`` tool starts a child conversation with its own system
prompt, model and tools, behind the parent's gate (:mod:`.definitions` the tool and the
``general`` agent, :mod:`.manager` the agents of one conversation, :mod:`.run` one run,
:mod:`.view` what a child shares with its parent)."""

from tui_agent.core.subagents.definitions import AGENT_TOOL, GENERAL, judge_agent_call
from tui_agent.core.subagents.manager import Child, ChildFactory, ChildParts, Subagents
from tui_agent.core.subagents.run import run_agent

__all__ = ["AGENT_TOOL", "GENERAL", "Child", "ChildFactory", "ChildParts", "Subagents",
           "judge_agent_call", "run_agent"]
