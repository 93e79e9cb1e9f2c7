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
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from typing import Any

from tui_agent.config.interpolate import mask
from tui_agent.config.models import AgentSettings
from tui_agent.core.agent.running import ToolCalls
from tui_agent.core.builtins import WithBuiltins, idle_agent_left_out, with_code_mode
from tui_agent.core.calls import resumed
from tui_agent.core.compactor import Compactor
from tui_agent.core.context import Context, Request
from tui_agent.core.diffs import Scopes
from tui_agent.core.events import (
    Compacted,
    ContextSize,
    ErrorOccurred,
    Event,
    Notice,
    RoundUsage,
    StopReason,
    TurnDone,
    Usage,
    masked,
)
from tui_agent.core.hooks import HookResult, Hooks
from tui_agent.core.llm import ChatModel, Reply, billed
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.llm.reply import cut_short
from tui_agent.core.messages import instructions_for
from tui_agent.core.permissions import Gate, Policy
from tui_agent.core.permissions.modes import with_mode_note
from tui_agent.core.prompt import PromptPart, SystemPrompt
from tui_agent.core.rounds import exchange
from tui_agent.core.scripts import CodeMode
from tui_agent.core.session import Compaction, SavedCall, SessionWriter, new_id, records
from tui_agent.core.skills import servers as server_skills
from tui_agent.core.skills.catalog import Catalog
from tui_agent.core.skills.index import skills_index
from tui_agent.core.skills.tool import BUILTIN_SERVER, SkillTool
from tui_agent.core.subagents import Subagents
from tui_agent.tools.spec import ToolSource, ToolSpec
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

MAX_STOP_REPEATS = 3
"""Times in a row a ``Stop`` hook may send the model back to work in one turn."""
STOP_NOTE = records.STOP_NOTE
HOOK_CONTEXT = records.PROMPT_CONTEXT


def prompt_text(text: str | list[dict[str, Any]]) -> str:
    """The words of a prompt (its text parts), as a ``UserPromptSubmit`` hook reads them."""
    if isinstance(text, str):
        return text
    return "\n".join(p.get("text", "") for p in text if p.get("type") == "text")


class Agent(ToolCalls):
    """One conversation with one model, its tools and its gate. ``prompt``: its system
    prompt's parts (default: ``system_prompt`` alone, and the servers' instructions)."""

    def __init__(self, llm: ChatModel, tools: ToolSource, gate: Gate, *,
                 settings: AgentSettings | None = None, policy: Policy | None = None,
                 session: SessionWriter | None = None, system_prompt: str | None = None,
                 history: Sequence[dict[str, Any]] = (),
                 compaction: Compaction | None = None,
                 code_mode: CodeMode | None = None, scopes: Scopes | None = None,
                 prompt: SystemPrompt | None = None, skills: Catalog | None = None,
                 hooks: Hooks | None = None) -> None:
        self.llm = llm
        self.skills = skills if skills is not None else Catalog()
        """The skills on offer (the front end adds their origins, off its first frame)."""
        self._skill_tool = SkillTool(self.skills)
        self.subagents = Subagents()
        """The sub-agents it may start with the ``agent`` tool (none until the wiring
        gives it a factory and the agents found)."""
        self.tool_view: Callable[[ToolSpec], bool] | None = None
        self.rounds_counted = False
        """Whether each request's usage is told as it ends (:class:`RoundUsage`): a
        sub-agent's, for its card's live count."""
        """For a sub-agent: which of the tools on offer it gets (its file's ``tools``)."""
        self.tools = tools
        self.gate = gate
        self.settings = settings or AgentSettings()
        self.policy = policy or Policy()
        self.session = session
        self.conversation_id = session.id if session is not None else new_id()
        """The id requests carry without a session file (with one, the file's id)."""
        self.prompt = prompt or SystemPrompt(own=None, replacement=system_prompt)
        if prompt is not None and system_prompt is not None:
            self.prompt.replacement = system_prompt
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
        self.hooks = hooks
        """The user's hooks (:mod:`tui_agent.core.agent.hooked` fires them)."""
        self.halted: str | None = None
        self._background: set[asyncio.Task[HookResult]] = set()
        self.held: list[dict[str, Any]] = []
        """What a ``SessionStart`` hook added, recorded only with the first prompt: a
        session nobody said anything in stays blank (and is removed)."""
        self.starting: asyncio.Task[list[Event]] | None = None
        """``SessionStart`` run in the background by a front end that could not wait for
        it (the app's ``/clear``, a resume): the next turn waits for it first, so what its
        hooks add to the conversation comes before the prompt. The front end shows its
        notices when it ends."""

    @property
    def tools(self) -> ToolSource:
        """The source given (the hub, once servers start) with the built-in tools."""
        return self._tools

    @tools.setter
    def tools(self, source: ToolSource) -> None:
        inner = source.inner if isinstance(source, WithBuiltins) else source
        self._tools = WithBuiltins(inner, self._skill_tool, lambda: self.subagents)
        server_skills.attach(self.skills, inner)

    @property
    def system_prompt(self) -> str | None:
        """``[model] system_prompt``: stands in place of tui-agent's own part."""
        return self.prompt.replacement

    @system_prompt.setter
    def system_prompt(self, text: str | None) -> None:
        self.prompt.replacement = text

    def recorded(self, index: int) -> int:
        """How many of the messages before ``index`` are in the session file."""
        return index - bisect.bisect_left(self._added, index)

    def request(self, offered: dict[str, ToolSpec] | None = None) -> Request:
        """What the next request carries besides the messages: the system text (with the
        instructions of the servers whose tools are offered) and the tool definitions."""
        offered = self._offered() if offered is None else offered
        self._index_skills(offered)
        system = self.prompt.text(instructions_for(
            self.tools, offered, code_mode=self.code_mode is not None))
        return Request(system and mask(system, self.secrets()),
                       [s.to_openai() for s in offered.values()])

    def prompt_parts(self) -> list[PromptPart]:
        """The system prompt's parts as the next request sends them (``/context``)."""
        offered = self._offered()
        self._index_skills(offered)
        return self.prompt.parts(instructions_for(
            self.tools, offered, code_mode=self.code_mode is not None))

    def _index_skills(self, offered: dict[str, ToolSpec]) -> None:
        """The skills index in the prompt, where the ``skill`` tool is offered."""
        self.prompt.skills_index = skills_index(self.skills.entries()) if any(
            s.server == BUILTIN_SERVER for s in offered.values()) else None

    async def prompt_sizes(self) -> list[tuple[str, int]]:
        """Each part of the system prompt with its tokens (the model's tokenizer)."""
        counter = await self.context.counter(self.llm)
        parts = self.prompt_parts()
        return await asyncio.to_thread(lambda: [(p.name, counter.text(p.text)) for p in parts])

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

    def agent_self(self) -> Agent:
        return self

    def _offered(self) -> dict[str, ToolSpec]:
        view = self.tool_view
        allowed = {s.name: s for s in self.tools.specs()
                   if self.policy.offered(s.server, s.tool) and (view is None or view(s))}
        return with_code_mode(self.code_mode, idle_agent_left_out(allowed, self.subagents))

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
        with ``TurnDone`` unless the caller stops it first. A ``UserPromptSubmit`` hook
        that blocks keeps ``text`` from being sent (or recorded)."""
        self.halted = None
        if self.starting is not None:  # not awaited itself: a cancelled turn leaves it be
            starting, self.starting = self.starting, None
            await asyncio.wait({starting})
        heard: list[Event] = []
        said = await self.fire("UserPromptSubmit", {"prompt": prompt_text(text)}, heard.append)
        for note in heard:
            yield note
        if said.blocked or self.halted is not None:
            yield Notice(clean(f"your prompt was not sent: {said.reason or self.halted}"))
            yield TurnDone(Usage(), "end")
            return
        # In plan mode the model is told so with the message (not in the system prompt,
        # whose cache a mode switch would break).
        self.record_held()  # a SessionStart hook's words, held until something is said
        self.record({"role": "user", "content": with_mode_note(text, self.policy.mode)})
        if said.context:  # for this turn's requests and the ones after, as Claude Code does
            self.record({"role": "user", "content": f"{HOOK_CONTEXT}\n{said.context}"})
        repeats = 0
        usage = Usage()
        reason: StopReason = "end"
        size: ContextSize | None = None
        try:
            for problem in await self.prompt.refresh():  # memory edits apply from now
                yield Notice(clean(problem))
            for problem in await self.skills.refresh():  # so do skills added or edited
                yield Notice(clean(f"skill not offered: {problem}"))
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
                if self.rounds_counted:
                    yield RoundUsage(billed(self.llm, reply.usage))
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
                    if repeats < MAX_STOP_REPEATS and self.halted is None:
                        heard = []
                        said = await self.fire("Stop", {
                            "stop_hook_active": repeats > 0,
                            "last_assistant_message": reply.text}, heard.append)
                        for note in heard:
                            yield note
                        if said.blocked and self.halted is None:  # the hook says: go on
                            repeats += 1
                            self.record({"role": "user", "content": f"{STOP_NOTE} {said.reason}"})
                            continue
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
                if self.halted is not None:
                    break
            if self.halted is not None:
                yield Notice(clean(f"the turn was stopped by a hook: {self.halted}"))
        except (asyncio.CancelledError, GeneratorExit):
            reason = "cancelled"
            raise
        finally:  # a turn that billed no tokens costs 0.0, or unknown for an unpriced model
            usage = billed(self.llm, usage) + self.subagents.take_usage()
            self.usage = self.usage + usage
            if self.session is not None:
                self.session.turn_end(reason, usage)
        yield TurnDone(usage, reason, size)
