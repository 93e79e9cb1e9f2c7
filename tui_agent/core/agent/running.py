"""The tool calls of a turn: each asked about in order (the policy, then the gate), the
approved ones run concurrently, every call answered in the history (even when the turn is
stopped mid-way), and calls that will not run refused with the reason. The loop that
asks the model and hands its calls here is :mod:`tui_agent.core.agent.loop`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from tui_agent.codemode.meta import EXECUTE, META_SERVER
from tui_agent.config.models import AgentSettings
from tui_agent.core.agent.hooked import Hooked
from tui_agent.core.builtins import judge, skill_news
from tui_agent.core.calls import Call, capped, news_to, prepare, started
from tui_agent.core.diffs import Scopes
from tui_agent.core.events import ApprovalDecided, Event, Notice, ToolResult, Usage
from tui_agent.core.llm import ChatModel, ToolCallRequest
from tui_agent.core.messages import media_message, sentence
from tui_agent.core.permissions import Decision, Gate, Judgement, PendingCall, Policy, with_change
from tui_agent.core.rewind import call_meta
from tui_agent.core.scripts import CodeMode, Emit, run_script
from tui_agent.core.session import CallLog, SavedCall, SessionWriter
from tui_agent.core.skills.tool import BUILTIN_SERVER, SkillTool
from tui_agent.core.subagents import AGENT_TOOL, Subagents, run_agent
from tui_agent.core.subagents.manager import Agent
from tui_agent.tools.call_meta import CALL_META
from tui_agent.tools.news import CALL_NEWS
from tui_agent.tools.spec import ToolOutcome, ToolSource, ToolSpec
from tui_agent.tools.text import clean


def always_of(spec: ToolSpec, judged: Judgement) -> str:
    """What an "always allow" answer to the call would trust (the question offers one
    only when it is not empty): a skill as it is now, else the tool's definition;
    nothing for a tool its server asks for at every call."""
    if judged.firm:
        return ""
    return judged.trust[1] if judged.trust else spec.fingerprint


class ToolCalls(Hooked):
    """The tool-call half of :class:`~tui_agent.core.agent.Agent` (its parts, as the
    agent sets them)."""

    llm: ChatModel
    tools: ToolSource
    gate: Gate
    settings: AgentSettings
    policy: Policy
    session: SessionWriter | None
    code_mode: CodeMode | None
    scopes: Scopes | None
    _kinds: frozenset[str] | None
    _skill_tool: SkillTool
    subagents: Subagents

    def agent_self(self) -> Agent:
        raise NotImplementedError  # the agent's: itself, as the parent of a sub-agent

    def record(self, message: dict[str, Any], *, incomplete: bool = False,
               usage: Usage | None = None, sync: bool = True,
               call: SavedCall | None = None) -> None:
        raise NotImplementedError  # the agent's: the conversation and its session file

    async def ask(self, spec: ToolSpec, pending: PendingCall, judged: Judgement,
                  emit: Emit) -> Decision:
        """Settle a call the policy did not auto-approve: denied by the policy, or asked of
        the gate. Emits the decision (and a notice if "always allow" could not be saved).
        Calls from scripts come here too."""
        if judged.verdict == "deny":
            decision = Decision.deny(judged.why, by=judged.by)
        else:
            try:
                if self.gate.asks_person:
                    self.fire_and_forget("Notification", {
                        "message": clean(f"tui-agent needs your permission to use "
                                         f"{spec.name}"),
                        "notification_type": "permission_prompt"})
                decision = await self.gate.decide(await with_change(pending, self.scopes))
            except Exception as exc:  # a broken gate must fail closed, not crash the turn
                decision = Decision.deny(f"the approval prompt failed ({type(exc).__name__}: "
                                         f"{clean(str(exc))})", by="tui-agent")
            problem = None
            if decision.approved and decision.rule and judged.lacks_allowance:
                problem = self.policy.add_rule("allow", decision.rule)
            elif decision.approved and decision.always and judged.trust:
                problem = self._skill_tool.always(judged.trust, self.policy.store)
            elif decision.approved and decision.always and spec.fingerprint and \
                    not judged.firm:  # the server asks every time: nothing to remember
                problem = self.policy.always_allow(spec.server, spec.tool, spec.fingerprint)
            if problem:
                emit(Notice(clean(f"always allow {spec.name}: {problem}")))
        emit(ApprovalDecided(pending.id, "approved" if decision.approved else "denied",
                             decision.reason, decision.by or "you"))
        return decision

    async def _decide(self, call: Call) -> AsyncGenerator[Event, None]:
        spec, req = call.spec, call.request
        assert spec is not None and call.arguments is not None
        if spec.server == META_SERVER:  # reads stubs, or runs a script whose calls each ask
            yield ApprovalDecided(req.id, "auto")
            return
        events: list[Event] = []
        pre = await self.pre_tool(spec, req.id, call.arguments, events.append)
        call.arguments = pre.arguments  # a hook's updatedInput: judged, asked and run
        for event in events:
            yield event
        judged = pre.judged(judge(self.policy, self._skill_tool, spec, call.arguments))
        if judged.verdict == "auto":
            yield ApprovalDecided(req.id, "auto", judged.why or None, judged.by or None)
            return
        events = []
        decision = await self.ask(spec, PendingCall(
            req.id, req.name, spec.server, spec.tool, call.arguments, spec.description,
            why=judged.why, fingerprint=always_of(spec, judged), hints=spec.hints,
            rule_helps=judged.lacks_allowance), judged,
            events.append)
        for event in events:
            yield event
        if not decision.approved:
            why = f" Reason: {sentence(decision.reason)}" if decision.reason else ""
            who = "A hook" if decision.by.startswith("hook: ") else "The user"
            call.outcome = ToolOutcome(f"{who} denied this call of {req.name}.{why} "
                                       "Do not retry it unchanged.", is_error=True)

    async def _run_tools(self, requests: list[ToolCallRequest],
                         offered: dict[str, ToolSpec]) -> AsyncGenerator[Event, None]:
        """Ask about each call in order, then run the approved ones concurrently. A
        running call may emit events of its own (a script's calls); they come out as
        they happen, before the call's own result."""
        calls = [prepare(r, offered) for r in requests]
        log = CallLog()  # what the front ends saw of each call, for the session file
        tasks: dict[asyncio.Task[None], Call] = {}
        queue: asyncio.Queue[Event | Call] = asyncio.Queue()
        self._kinds = None

        async def run(call: Call) -> None:
            started = time.monotonic()
            took = 0.0
            try:
                took = await self._execute(call, queue.put_nowait)
                if call.outcome is not None and call.outcome.media and self._kinds is None:
                    # May ask a local model's server: off the event loop, before _answer.
                    self._kinds = await asyncio.to_thread(self._media_kinds)
            except Exception as exc:  # a bug of ours must not leave the turn waiting
                took = time.monotonic() - started
                call.outcome = ToolOutcome(f"error: {call.request.name} failed inside "
                                           f"tui-agent: {type(exc).__name__}: "
                                           f"{clean(str(exc))}", is_error=True)
            finally:
                if call.outcome is not None:
                    queue.put_nowait(ToolResult(call.request.id, call.outcome.is_error,
                                                call.outcome.text, round(took, 3)))
                queue.put_nowait(call)

        try:
            for call in calls:
                yield log.saw(started(call))
                if call.outcome is None:
                    async with aclosing(self._decide(call)) as deciding:
                        async for event in deciding:
                            yield log.saw(event)
                if call.outcome is not None:
                    yield log.saw(ToolResult(call.request.id, True, call.outcome.text))
            for call in calls:
                if call.outcome is None:
                    tasks[asyncio.create_task(run(call))] = call
            running = len(tasks)
            while running:
                item = await queue.get()
                if isinstance(item, Call):
                    running -= 1
                else:
                    yield log.saw(item)
        finally:
            for task in tasks:
                task.cancel()
            try:  # let them clean up (a script's child process is killed and reaped, a
                # sub-agent says what it had): then their answers are known
                if tasks:
                    await asyncio.wait(tasks, timeout=5)
            finally:
                self._answer(calls, "cancelled by the user before it finished", log)

    def _answer(self, calls: list[Call], unfinished: str, log: CallLog) -> None:
        """Put every call's result in the history, in call order, then fsync once.

        Called from ``finally``, so even a turn stopped mid-way leaves every call
        answered; a call with no outcome yet gets ``unfinished``. Beside each result the
        session file keeps how ``log`` saw the call end (a resumed card shows the same)."""
        for call in calls:
            text = call.outcome.text if call.outcome is not None else unfinished
            saved = log.saved(call.request.id)
            agent = self.subagents.ended.pop(call.request.id, None)
            if saved is not None and agent is not None:
                saved = replace(saved, agent=agent)
            self.record({"role": "tool", "tool_call_id": call.request.id, "content": text},
                        sync=False, call=saved)
        kinds = frozenset[str]()
        if any(c.outcome and c.outcome.media for c in calls):
            kinds = self._kinds if self._kinds is not None else self._media_kinds()
        shown = media_message(calls, kinds) if kinds else None
        if shown is not None:
            self.record(shown, sync=False)
        if self.session is not None:
            self.session.sync()

    async def _execute(self, call: Call, emit: Emit) -> float:
        started = time.monotonic()
        told = CALL_META.set(call_meta(self.session))  # whose call: for the checkpoints
        try:
            await self._execute_tagged(call, emit)
        finally:
            CALL_META.reset(told)
        return time.monotonic() - started

    async def _execute_tagged(self, call: Call, emit: Emit) -> None:
        spec = call.spec
        assert spec is not None and call.arguments is not None
        if spec.server == BUILTIN_SERVER and spec.tool == AGENT_TOOL:
            try:
                outcome = await run_agent(self.subagents, self.agent_self(),
                                          call.request.id, call.arguments, emit)
            except asyncio.CancelledError:  # the turn stopped: it answers with what it had
                call.outcome = self.subagents.answers.pop(call.request.id, None)
                raise
            self.subagents.answers.pop(call.request.id, None)
            outcome = await self.post_tool(spec, call.request.id, call.arguments, outcome,
                                           emit)
        elif spec.server == META_SERVER and self.code_mode is not None:
            if spec.tool == EXECUTE:
                outcome = await run_script(self, self.code_mode, call.request.id,
                                           call.arguments, emit)
            else:
                outcome = self.code_mode.answer(spec.tool, call.arguments)
        else:
            token = CALL_NEWS.set(news_to(call.request.id, emit))
            try:
                outcome = skill_news(call.request.id, await self.run_tool(spec, call.arguments),
                                     emit)
            finally:
                CALL_NEWS.reset(token)
            outcome = await self.post_tool(spec, call.request.id, call.arguments, outcome,
                                           emit)
        call.outcome = self._capped(call.request.id, outcome)

    async def run_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        """One call on the tool source, bounded by its timeout; never raises (but for
        cancellation)."""
        timeout = spec.timeout or self.settings.tool_timeout
        try:
            async with asyncio.timeout(timeout):
                return await self.tools.call(spec, arguments)
        except TimeoutError:
            return ToolOutcome(f"error: {spec.name} did not finish within {timeout:g} s",
                               is_error=True)
        except Exception as exc:  # a tool's failure is the model's to read, not a crash
            return ToolOutcome(f"error: {spec.name} failed: {type(exc).__name__}: "
                               f"{clean(str(exc))}", is_error=True)

    def _media_kinds(self) -> frozenset[str]:
        """What the model reads besides text: ``image``, ``audio``."""
        takes = getattr(self.llm, "takes", None)
        return frozenset(takes()) if takes is not None else frozenset()

    def _capped(self, call_id: str, outcome: ToolOutcome) -> ToolOutcome:
        """Cut a result longer than ``max_tool_output`` tokens; keep the whole of it on disk."""
        return capped(outcome, self.settings.max_tool_output, self.session, call_id)

    async def _refuse(self, requests: list[ToolCallRequest], offered: dict[str, ToolSpec],
                      why: str = "not run: the turn reached its max_depth limit"
                      ) -> AsyncGenerator[Event, None]:
        """Answer calls that will not run (``why``): the turn hit ``max_depth``, or the
        provider stopped the reply that asked for them."""
        refused = ToolOutcome(why, is_error=True)
        calls = [prepare(r, offered) for r in requests]
        log = CallLog()
        for call in calls:
            call.outcome = refused
            log.saw(started(call))
            log.saw(ToolResult(call.request.id, True, refused.text))
        try:
            for call in calls:
                yield started(call)
                yield ToolResult(call.request.id, True, refused.text)
        finally:
            self._answer(calls, refused.text, log)
