"""The sub-agents in the app: ``/agents`` (the agents the model can start, and the agent
files that could not be used) and ``x`` on an agent card (stop that one sub-agent; esc
still stops the whole turn, every sub-agent with it).

Both go through the core's :class:`~tui_agent.core.subagents.Subagents`
(``agent.subagents``). Names, descriptions, models and paths come from agent files: each
is cleaned and shown as plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from tui_agent.custom.agents import AgentDef, AgentProblem
    from tui_agent.ui.host import ChatHost
    from tui_agent.ui.widgets.agent_card import AgentCard

DESCRIPTION_CHARS = 60
NO_AGENTS = ("no sub-agents: this tui-agent has no agent tool (the model cannot hand work "
             "to another agent)")


def subagents_of(app: ChatHost) -> Any:
    """The conversation's sub-agents (None when the core has none to offer)."""
    return getattr(app.backend.agent, "subagents", None)


def stop(app: ChatHost, card: AgentCard) -> None:
    """Stop the sub-agent of ``card`` (it answers its parent with what it had)."""
    stopper = getattr(subagents_of(app), "stop", None)
    if stopper is None:
        app.notify("one sub-agent cannot be stopped alone here: esc stops the whole turn",
                   severity="warning", markup=False)
        return
    if stopper(card.call_id):
        card.set_status("stopping")
        app.notify(f"stopping the sub-agent {clean(card.agent_name)} ({clean(card.call_id)}); "
                   "it answers with what it has", markup=False)
    else:
        app.notify(f"the sub-agent {clean(card.agent_name)} is not running", markup=False)


async def listing(app: ChatHost) -> None:
    """``/agents``: into the transcript."""
    subagents = subagents_of(app)
    if subagents is None:
        await app.transcript.note(NO_AGENTS)
        return
    lines = agents_report(subagents.definitions(), subagents.problems)
    await app.transcript.note("\n".join(lines))


def agents_report(agents: Sequence[AgentDef], problems: Sequence[AgentProblem]) -> list[str]:
    """One agent a few lines: name, origin, model, tools, description; then where it is
    defined. Then the files not used, ``file:line: what was wrong``."""
    from tui_agent.core.skills.report import tilde
    from tui_agent.tools.wording import counted

    lines = [f"{counted(len(agents), 'agent')}: the model starts one with the agent tool "
             "(the agent's name and a task); each sees only its task"]
    wide = max((len(clean(a.name)) for a in agents), default=0)
    for agent in agents:
        model = clean(agent.model) if agent.model else "the session's model"
        tools = clean(", ".join(agent.tools)) if agent.tools is not None else "all"
        lines.append(f"  {clean(agent.name):<{wide}}  {clean(agent.origin):<7}  {model}  "
                     f"tools: {tools}")
        more = [short(agent.description)]
        if agent.max_turns:
            more.append(f"max {agent.max_turns} turns")
        if agent.reasoning_effort:
            more.append(f"reasoning {clean(agent.reasoning_effort)}")
        lines.append(f"  {'':<{wide}}  {' · '.join(more)}")
        where = tilde(clean(f"{agent.file}:{agent.line}")) if agent.file else "built in"
        lines.append(f"  {'':<{wide}}  {where}")
    if problems:
        lines.append(f"not used ({len(problems)}):")
        lines += [f"  {tilde(clean(str(p)))}" for p in problems]
    return lines


def short(text: str) -> str:
    """A description's first line, at most :data:`DESCRIPTION_CHARS` characters."""
    line = " ".join(clean(text).split())
    return line if len(line) <= DESCRIPTION_CHARS else line[:DESCRIPTION_CHARS - 1] + "…"
