"""``/agents`` (line-mode chat) and ``tui-agent agents``: every agent with its origin,
model, tools and file, then the agent files that could not be used and why. Plain lines,
every part from a file cleaned, for any front end."""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.custom.agents import AgentDef, AgentProblem
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

DESCRIBED = 100
"""Characters of a description shown."""


def tools_of(agent: AgentDef) -> str:
    """``all``, ``none``, or the globs (and ``not`` the disallowed ones)."""
    shown = "all" if agent.tools is None else ", ".join(agent.tools) or "none"
    if agent.disallowed:
        shown += f" (not {', '.join(agent.disallowed)})"
    return clean(shown)


def agents_report(agents: Sequence[AgentDef], problems: Sequence[AgentProblem]) -> list[str]:
    """The lines of the listing."""
    lines = [f"{counted(len(agents), 'agent')} the model may start with the agent tool "
             "(files: agents/ beside your config, ~/.claude/agents/, a trusted project's "
             ".tui-agent/agents/ and .claude/agents/):"]
    for agent in agents:
        description = " ".join(clean(agent.description).split())
        if len(description) > DESCRIBED:
            description = description[:DESCRIBED - 1] + "…"
        turns = f", max_turns {agent.max_turns}" if agent.max_turns else ""
        effort = f", reasoning_effort {agent.reasoning_effort}" if agent.reasoning_effort \
            else ""
        lines.append(f"  {clean(agent.name)} ({agent.origin}): model "
                     f"{clean(agent.model or 'inherit')}, tools {tools_of(agent)}"
                     f"{turns}{effort}")
        lines.append(f"    {description}")
        if agent.file is not None:
            lines.append(f"    {clean(str(agent.file))}")
    if problems:
        lines.append(f"{counted(len(problems), 'problem')} with agent files:")
        lines += [f"  {clean(str(problem))}" for problem in problems]
    return lines
