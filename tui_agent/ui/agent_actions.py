"""The sub-agents in the app: ``/agents`` (the agents the model can start, and the agent
files that could not be used) and ``x`` on an agent card (stop that one sub-agent; esc
still stops the whole turn, every sub-agent with it).

Both go through the core's :class:`~tui_agent.core.subagents.Subagents`
(``agent.subagents``); the listing is the one ``tui-agent agents`` prints. Names and ids
come from agent files and models: each is cleaned and shown as plain text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from tui_agent.ui.host import ChatHost
    from tui_agent.ui.widgets.agent_card import AgentCard

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


async def tell_problems(app: ChatHost) -> None:
    """At start: each agent file that could not be used, with its file and line."""
    from tui_agent.core.skills.report import tilde

    for problem in getattr(subagents_of(app), "problems", ()):
        await app.transcript.note(f"agent file not used: {tilde(clean(str(problem)))}",
                                  "warning")


async def listing(app: ChatHost) -> None:
    """``/agents``: into the transcript."""
    subagents = subagents_of(app)
    if subagents is None:
        await app.transcript.note(NO_AGENTS)
        return
    # As ``tui-agent agents`` lists them. (The ignore is for this branch before the core's
    # sub-agents are merged: its mypy run has no such module yet.)
    from tui_agent.core.subagents.report import (  # type: ignore[import-not-found,unused-ignore]
        agents_report,
    )

    lines = agents_report(subagents.definitions(), subagents.problems)
    await app.transcript.note("\n".join(lines))
