"""The sub-agents in the app: ``/agents`` (the agents the model can start, and the agent
files that could not be used) and ``x`` on an agent card (stop that one sub-agent; esc
still stops the whole turn, every sub-agent with it).

Both go through the core's :class:`~tui_agent.core.subagents.Subagents`
(``agent.subagents``); the listing is the one ``tui-agent agents`` prints. Names and ids
come from agent files and models: each is cleaned and shown as plain text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from tui_agent.ui.host import ChatHost
    from tui_agent.ui.widgets.agent_card import AgentCard

def stop(app: ChatHost, card: AgentCard) -> None:
    """Stop the sub-agent of ``card`` (it answers its parent with what it had)."""
    name = f"{clean(card.agent_name)} ({clean(card.call_id)})"
    if app.backend.agent.subagents.stop(card.call_id):
        card.set_status("stopping")
        app.notify(f"stopping the sub-agent {name}; it answers with what it has",
                   markup=False)
    else:
        app.notify(f"the sub-agent {name} is not running", markup=False)


async def tell_problems(app: ChatHost) -> None:
    """At start: each agent file that could not be used, with its file and line."""
    from tui_agent.core.skills.report import tilde

    for problem in app.backend.agent.subagents.problems:
        await app.transcript.note(f"agent file not used: {tilde(clean(str(problem)))}",
                                  "warning")


async def listing(app: ChatHost) -> None:
    """``/agents``, into the transcript, as ``tui-agent agents`` lists them."""
    from tui_agent.core.subagents.report import agents_report

    subagents = app.backend.agent.subagents
    await app.transcript.note("\n".join(agents_report(subagents.definitions(),
                                                      subagents.problems)))
