"""The chat loop: user → LLM → tool calls → gate → tools → results → LLM …

:meth:`Agent.run_turn` is an async generator of the events in
:mod:`tui_agent.core.events`. The caller may stop it at any point (cancel the
task, or ``aclose()`` the generator): what streamed so far is kept, marked
incomplete, and every tool call the model made gets an answer in the history,
so the next turn starts from a valid conversation. Each request to the model and its
reply is a round (:mod:`tui_agent.core.rounds`); the tool calls between rounds run here.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any

from tui_agent.codemode.meta import EXECUTE, META_SERVER
from tui_agent.config.interpolate import mask
from tui_agent.config.models import AgentSettings
from tui_agent.core.approval import Decision, Gate, Judgement, PendingCall, Policy, with_change
from tui_agent.core.builtins import WithBuiltins, judge, skill_news, with_code_mode
from tui_agent.core.calls import Call, capped, news_to, prepare, resumed, started
from tui_agent.core.compactor import Compactor
from tui_agent.core.context import Context, Request
from tui_agent.core.diffs import Scopes
from tui_agent.core.events import (
    ApprovalDecided,
    Compacted,
    ContextSize,
    ErrorOccurred,
    Event,
    Notice,
    StopReason,
    ToolResult,
    TurnDone,
    Usage,
    masked,
)
from tui_agent.core.llm import ChatModel, Reply, ToolCallRequest, billed
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.llm.reply import cut_short
from tui_agent.core.messages import instructions_for, media_message, sentence, system_text
from tui_agent.core.rounds import exchange
from tui_agent.core.scripts import CodeMode, Emit, run_script
from tui_agent.core.session import CallLog, Compaction, SavedCall, SessionWriter, new_id
from tui_agent.core.skills import servers as server_skills
from tui_agent.core.skills.catalog import Catalog
from tui_agent.core.skills.index import skills_index
from tui_agent.core.skills.tool import BUILTIN_SERVER, SkillTool
from tui_agent.tools.news import CALL_NEWS
from tui_agent.tools.spec import ToolOutcome, ToolSource, ToolSpec
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted


class Agent:
    """One conversation with one model, its tools and its gate."""

    def __init__(self, llm: ChatModel, tools: ToolSource, gate: Gate, *,
                 settings: AgentSettings | None = None, policy: Policy | None = None,
                 session: SessionWriter | None = None, system_prompt: str | None = None,
                 history: Sequence[dict[str, Any]] = (),
                 compaction: Compaction | None = None,
                 code_mode: CodeMode | None = None, scopes: Scopes | None = None,
                 skills: Catalog | None = None) -> None:
        self.llm = llm
        self.skills = skills if skills is not None else Catalog()
        """The skills on offer (the front end adds their origins, off its first frame)."""
        self._skill_tool = SkillTool(self.skills)
        self.tools = tools
        self.gate = gate
        self.settings = settings or AgentSettings()
        self.policy = policy or Policy()
        self.session = session
        self.conversation_id = session.id if session is not None else new_id()
        """The id requests carry without a session file (with one, the file's id)."""
        self.system_prompt = system_prompt
        self._added: list[int] = []  # what repair adds is not in the session file
        self.messages, start = resumed(history, compaction, self._added)
        self.context = Context(self.settings.compact_at, compaction, start)
        self.compactor = Compactor(self)
        self.usage = Usage()
        self._kinds: frozenset[str] | None = None
        """What the model reads besides text, asked (off the event loop) once a tool of
        the current batch returned media."""
        self.code_mode = code_mode
        self.scopes = scopes  # where each server's files are, for a write's diff

    @property
    def tools(self) -> ToolSource:
        """The source given (the hub, once servers start) with the built-in tools."""
        return self._tools

    @tools.setter
    def tools(self, source: ToolSource) -> None:
        inner = source.inner if isinstance(source, WithBuiltins) else source
        self._tools = WithBuiltins(inner, self._skill_tool)
        server_skills.attach(self.skills, inner)

    def recorded(self, index: int) -> int:
        """How many of the messages before ``index`` are in the session file."""
        return index - bisect.bisect_left(self._added, index)

    def request(self, offered: dict[str, ToolSpec] | None = None) -> Request:
        """What the next request carries besides the messages: the system text (with the
        instructions of the servers whose tools are offered) and the tool definitions."""
        offered = self._offered() if offered is None else offered
        index = skills_index(self.skills.entries()) if any(
            s.server == BUILTIN_SERVER for s in offered.values()) else None
        system = system_text(self.system_prompt, instructions_for(
            self.tools, offered, code_mode=self.code_mode is not None), skills=index)
        return Request(system and mask(system, self.secrets()),
                       [s.to_openai() for s in offered.values()])

    def secrets(self) -> frozenset[str]:
        """What the model never reads: the secrets its session file masks (the model reads
        what the file holds, so a resumed conversation reads the same), and every OAuth
        token learned (always masked)."""
        return self.session.secrets if self.session is not None else frozenset()

    def add_messages(self, messages: Sequence[tuple[str, str]]) -> None:
        """Put ``(role, text)`` messages into the conversation as they are (a server's
        prompt, its roles kept), before the next turn."""
        for role, text in messages:
            self.record({"role": role, "content": text}, sync=False)
        if self.session is not None:
            self.session.sync()

    def _offered(self) -> dict[str, ToolSpec]:
        allowed = {s.name: s for s in self.tools.specs()
                   if self.policy.offered(s.server, s.tool)}
        return with_code_mode(self.code_mode, allowed)

    def record(self, message: dict[str, Any], *, incomplete: bool = False,
               usage: Usage | None = None, sync: bool = True,
               call: SavedCall | None = None) -> None:
        """Add ``message`` to the conversation, masked, and write it to the session file
        (on disk when this returns, with ``sync``; ``call``: how a tool result's call
        ended, for the file alone: the model never reads it)."""
        message = masked(message, self.secrets())
        self.messages.append(message)
        if self.session is not None:
            self.session.message(message, incomplete=incomplete, usage=usage, sync=sync,
                                 call=call)

    async def run_turn(self, text: str | list[dict[str, Any]]) -> AsyncGenerator[Event, None]:
        """Send ``text`` (or parts: text and images) and run the loop until the model
        answers without tools, the depth bound is reached, or something fails. Always ends
        with ``TurnDone`` unless the caller stops it first."""
        self.record({"role": "user", "content": text})
        usage = Usage()
        reason: StopReason = "end"
        size: ContextSize | None = None
        try:
            prepare = getattr(self.tools, "prepare", None)
            if prepare is not None:
                async with aclosing(prepare()) as notes:
                    async for note in notes:
                        yield Notice(clean(note))
            for depth in range(1, self.settings.max_depth + 1):
                offered = self._offered()
                reply = Reply()
                try:
                    async with aclosing(exchange(self, self.request(offered), reply)
                                        ) as stream:
                        async for item in stream:
                            if isinstance(item, Compacted):  # its request bills the turn
                                usage = usage + item.usage
                            size = item if isinstance(item, ContextSize) else size
                            yield item
                except LLMError as exc:
                    reason = "error"
                    yield ErrorOccurred(str(exc), kind=exc.kind)
                    break
                finally:
                    usage = usage + reply.usage
                short = cut_short(reply.finish_reason, getattr(
                    getattr(self.llm, "settings", None), "max_tokens", None))
                if short is not None:  # the provider stopped the reply: so ends the turn
                    reason = short[0]
                    if reply.tool_calls:  # a call cut mid-arguments must not run
                        async with aclosing(self._refuse(
                                reply.tool_calls, offered, "not run: the reply was stopped "
                                f"({reason}) before its calls were surely whole")) as refused:
                            async for event in refused:
                                yield event
                    yield Notice(short[1])
                    break
                if not reply.tool_calls:
                    break
                if depth == self.settings.max_depth:
                    reason = "max_depth"
                    async with aclosing(self._refuse(reply.tool_calls, offered)) as refused:
                        async for event in refused:
                            yield event
                    yield ErrorOccurred(
                        "stopped: the model was still calling tools after "
                        f"{counted(depth, 'round')} (max_depth = {depth}). Send another "
                        "message to let it go on, or raise [agent] max_depth.", kind="max_depth")
                    break
                async with aclosing(self._run_tools(reply.tool_calls, offered)) as running:
                    async for event in running:
                        yield event
        except (asyncio.CancelledError, GeneratorExit):
            reason = "cancelled"
            raise
        finally:  # a turn that billed no tokens costs 0.0, or unknown for an unpriced model
            usage = billed(self.llm, usage)
            self.usage = self.usage + usage
            if self.session is not None:
                self.session.turn_end(reason, usage)
        yield TurnDone(usage, reason, size)

    async def ask(self, spec: ToolSpec, pending: PendingCall, judged: Judgement,
                  emit: Emit) -> Decision:
        """Settle a call the policy did not auto-approve: denied by the policy, or asked of
        the gate. Emits the decision (and a notice if "always allow" could not be saved).
        Calls from scripts come here too."""
        if judged.verdict == "deny":
            decision = Decision.deny(judged.why)
        else:
            try:
                decision = await self.gate.decide(await with_change(pending, self.scopes))
            except Exception as exc:  # a broken gate must fail closed, not crash the turn
                decision = Decision.deny(f"the approval prompt failed ({type(exc).__name__}: "
                                         f"{clean(str(exc))})")
            if decision.approved and decision.always and spec.fingerprint:
                problem = self.policy.always_allow(spec.server, spec.tool, spec.fingerprint)
                if problem:
                    emit(Notice(clean(f"always allow {spec.name}: {problem}")))
        emit(ApprovalDecided(pending.id, "approved" if decision.approved else "denied",
                             decision.reason))
        return decision

    async def _decide(self, call: Call) -> AsyncGenerator[Event, None]:
        spec, req = call.spec, call.request
        assert spec is not None and call.arguments is not None
        if spec.server == META_SERVER:  # reads stubs, or runs a script whose calls each ask
            yield ApprovalDecided(req.id, "auto")
            return
        judged = judge(self.policy, self._skill_tool, spec, call.arguments)
        if judged.verdict == "auto":
            yield ApprovalDecided(req.id, "auto", judged.why or None)
            return
        events: list[Event] = []
        decision = await self.ask(spec, PendingCall(
            req.id, req.name, spec.server, spec.tool, call.arguments, spec.description,
            why=judged.why, fingerprint=spec.fingerprint, hints=spec.hints), judged,
            events.append)
        for event in events:
            yield event
        if not decision.approved:
            why = f" Reason: {sentence(decision.reason)}" if decision.reason else ""
            call.outcome = ToolOutcome(f"The user denied this call of {req.name}.{why} "
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
            self._answer(calls, "cancelled by the user before it finished", log)
            if tasks:  # let them clean up (a script's child process is killed and reaped)
                await asyncio.wait(tasks, timeout=5)

    def _answer(self, calls: list[Call], unfinished: str, log: CallLog) -> None:
        """Put every call's result in the history, in call order, then fsync once.

        Called from ``finally``, so even a turn stopped mid-way leaves every call
        answered; a call with no outcome yet gets ``unfinished``. Beside each result the
        session file keeps how ``log`` saw the call end (a resumed card shows the same)."""
        for call in calls:
            text = call.outcome.text if call.outcome is not None else unfinished
            self.record({"role": "tool", "tool_call_id": call.request.id, "content": text},
                        sync=False, call=log.saved(call.request.id))
        kinds = frozenset[str]()
        if any(c.outcome and c.outcome.media for c in calls):
            kinds = self._kinds if self._kinds is not None else self._media_kinds()
        shown = media_message(calls, kinds) if kinds else None
        if shown is not None:
            self.record(shown, sync=False)
        if self.session is not None:
            self.session.sync()

    async def _execute(self, call: Call, emit: Emit) -> float:
        spec = call.spec
        assert spec is not None and call.arguments is not None
        started = time.monotonic()
        if spec.server == META_SERVER and self.code_mode is not None:
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
        call.outcome = self._capped(call.request.id, outcome)
        return time.monotonic() - started

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
