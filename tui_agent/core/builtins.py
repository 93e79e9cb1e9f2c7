"""The tool source the loop reads: the servers' tools (the hub, or none) with the tools
tui-agent itself answers (``skill``, and ``agent``: :mod:`tui_agent.core.subagents`) beside
them. The model sees no difference:
each is a :class:`~tui_agent.tools.spec.ToolSpec` and every call passes the same gate.
Everything else the inner source offers (``instructions``, ``prepare``, ...) is passed
through."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tui_agent.core.events import Event, SkillUsed
from tui_agent.core.permissions import Judgement, Policy
from tui_agent.core.scripts import CodeMode
from tui_agent.core.skills.tool import BUILTIN_SERVER, SKILL_SPEC, SkillTool
from tui_agent.core.subagents import AGENT_TOOL, Subagents, judge_agent_call
from tui_agent.tools.spec import ToolOutcome, ToolSource, ToolSpec


class WithBuiltins:
    """``inner``'s tools, ``skill`` while there is a skill to load, and ``agent`` where
    sub-agents may be started (``agents``: the agent's, read at each listing). An
    ``agent`` call is the loop's to run (it needs the call's id and events): here it is
    refused."""

    def __init__(self, inner: ToolSource, skills: SkillTool,
                 agents: Callable[[], Subagents] | None = None) -> None:
        self.inner = inner
        self.skills = skills
        self.agents = agents

    def specs(self) -> Sequence[ToolSpec]:
        specs = tuple(self.inner.specs())
        if self.skills.catalog.offered():
            specs = (*specs, SKILL_SPEC)
        agents = self.agents() if self.agents is not None else None
        return (*specs, agents.spec()) if agents is not None and agents.offered() else specs

    async def call(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        if spec.server == BUILTIN_SERVER and spec.tool == AGENT_TOOL:
            return ToolOutcome("error: the agent tool runs only as a call of the model",
                               is_error=True)
        if spec.server == BUILTIN_SERVER:
            return await self.skills.call(arguments)
        return await self.inner.call(spec, arguments)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copying): never look for it in itself
            raise AttributeError(name)
        return getattr(self.inner, name)


def judge(policy: Policy, skills: SkillTool, spec: ToolSpec, arguments: dict[str, Any]
          ) -> Judgement:
    """The policy's word on a call; the built-in ``skill`` judges its own, and a tool a
    loaded skill's approved ``allowed-tools`` cover runs without asking (a denial, and a
    server's own "always ask", still stand)."""
    if spec.server == BUILTIN_SERVER and spec.tool == AGENT_TOOL:
        return judge_agent_call(policy, spec, arguments)
    if spec.server == BUILTIN_SERVER:
        return _skill(policy, skills, spec, arguments)
    judged = policy.judge(spec.server, spec.tool, spec.fingerprint, asks=spec.asks,
                          hints=spec.hints, arguments=arguments)
    if judged.verdict == "ask" and not judged.firm and not judged.by and \
            (skill := skills.catalog.grants(spec.name)):  # never what asks outright
        return Judgement("auto", f"allowed by the skill '{skill}' (you approved its "
                                 "allowed-tools)", by=f"the skill '{skill}' (its allowed-tools)")
    return judged


def _skill(policy: Policy, skills: SkillTool, spec: ToolSpec, arguments: dict[str, Any]
           ) -> Judgement:
    """A ``skill`` call, judged like any tool's where the person said so: a deny rule
    refuses it, an ask rule asks, an allow rule or auto mode lets it run; the skill's own
    judgement (a project's skill, or one whose ``allowed-tools`` are not approved yet,
    asks) decides the rest. Plan mode lets it run: loading a skill only reads its files
    (it is annotated read-only), and whatever tools it names are judged in plan mode
    before its ``allowed-tools`` count."""
    rules = policy.permission
    if rule := rules.first("deny", spec.server, spec.tool, arguments):
        return Judgement("deny", f"refused by {rule.said()}", by=rule.said())
    if rule := rules.first("ask", spec.server, spec.tool, arguments):
        return Judgement("ask", f"asks: {rule.said()}", by=rule.said())
    own = skills.judge(arguments, policy.store)
    if own.verdict == "ask" and (rule := rules.first("allow", spec.server, spec.tool,
                                                     arguments)):
        return Judgement("auto", by=rule.said())
    if own.verdict == "ask" and policy.mode == "auto":
        return Judgement("auto", by="auto mode")
    return own


def skill_news(call_id: str, outcome: ToolOutcome, emit: Callable[[Event], None]
               ) -> ToolOutcome:
    """Emit the ``skill`` event of a ``skill`` call's outcome; the outcome as the model
    reads it."""
    if not isinstance(outcome.value, SkillUsed):
        return outcome
    emit(replace(outcome.value, id=call_id))
    return ToolOutcome(outcome.text, outcome.is_error)


def idle_agent_left_out(allowed: dict[str, ToolSpec], subagents: Subagents
                        ) -> dict[str, ToolSpec]:
    """``allowed`` without the ``agent`` tool when no sub-agent could do more than the
    model itself: no tool of a server is on offer and no agent file defines one (the
    built-in ``general`` agent would be the same model without tools). A conversation
    with no tools then sends none, as before sub-agents: a model that takes no tools
    still works."""
    if not any(s.server == BUILTIN_SERVER and s.tool == AGENT_TOOL for s in allowed.values()):
        return allowed
    if any(s.server != BUILTIN_SERVER for s in allowed.values()) or any(
            d.origin != "builtin" for d in subagents.definitions()):
        return allowed
    return {n: s for n, s in allowed.items()
            if not (s.server == BUILTIN_SERVER and s.tool == AGENT_TOOL)}


def with_code_mode(code_mode: CodeMode | None, allowed: Mapping[str, ToolSpec]
                   ) -> dict[str, ToolSpec]:
    """What the model is offered: with code mode, the servers' tools behind its
    meta-tools and the built-in ones beside them (a script never loads a skill)."""
    if code_mode is None:
        return dict(allowed)
    builtin = {n: s for n, s in allowed.items() if s.server == BUILTIN_SERVER}
    return {**code_mode.offered({n: s for n, s in allowed.items() if n not in builtin}),
            **builtin}
