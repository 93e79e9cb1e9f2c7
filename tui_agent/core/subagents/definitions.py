"""The built-in ``agent`` tool's definition: the ``general`` agent every run has, the
tool's spec (whose description lists every agent the model may start), and how a call of
it is judged (like any tool where the person said so, else it runs: each call its
sub-agent makes asks for itself)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_agent.core.permissions import Judgement, Policy
from tui_agent.core.skills.tool import BUILTIN_SERVER
from tui_agent.custom.agents import AgentDef
from tui_agent.tools.spec import ToolSpec
from tui_agent.tools.text import clean

AGENT_TOOL = "agent"
GENERAL = AgentDef(
    name="general",
    description=("A general-purpose agent: researches a question or carries out a "
                 "multi-step task with the same tools as you, in a fresh context, and "
                 "reports back. Use it to keep long searches out of this conversation."),
    prompt=("You are a sub-agent of tui-agent, a terminal assistant. Another agent gave "
            "you one task: carry it out with the tools you have, without asking the user "
            "questions (nobody reads this conversation but that agent). When you are done, "
            "answer with a concise report of what you found or did: the facts, file paths "
            "and names that matter, and anything you could not do and why. Your last "
            "message is all the other agent reads."),
    origin="builtin")
"""The default agent (``{"agent": ...}`` left out): the parent's model and tools."""
MAX_DESCRIPTION = 300
"""Characters of one agent's description the tool's description carries."""


def agent_spec(agents: Sequence[AgentDef]) -> ToolSpec:
    """The ``agent`` tool as the model sees it, listing ``agents`` by name and
    description (cleaned: an agent file is someone's text)."""
    listed = "\n".join(f"- {clean(a.name)}: {_short(clean(a.description))}" for a in agents)
    description = (
        "Start a sub-agent on a task: it works in its own fresh context (it sees nothing "
        "of this conversation, so put everything it needs in the prompt), with its own "
        "model and tools, and answers with its final report and the tools it called. "
        "Several calls in one reply run at once. The agents:\n" + listed)
    return ToolSpec(
        name=AGENT_TOOL, server=BUILTIN_SERVER, tool=AGENT_TOOL, description=description,
        parameters={"type": "object", "properties": {
            "agent": {"type": "string", "description": "the agent's name, as listed "
                      "(default: general)"},
            "prompt": {"type": "string", "description": "the task, with all the context "
                       "the agent needs"}},
            "required": ["prompt"], "additionalProperties": False})


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION - 1] + "…"


def judge_agent_call(policy: Policy, spec: ToolSpec, arguments: dict[str, Any]) -> Judgement:
    """An ``agent`` call: a deny rule refuses it, an ask rule asks, and otherwise it runs
    without asking, plan mode included (starting a sub-agent does nothing by itself:
    each call it makes is judged as the parent's would be, in the same mode)."""
    rules = policy.permission
    if rule := rules.first("deny", spec.server, spec.tool, arguments):
        return Judgement("deny", f"refused by {rule.said()}", by=rule.said())
    if rule := rules.first("ask", spec.server, spec.tool, arguments):
        return Judgement("ask", f"asks: {rule.said()}", by=rule.said())
    return Judgement("auto", "starts a sub-agent: each of its calls is judged on its own")
