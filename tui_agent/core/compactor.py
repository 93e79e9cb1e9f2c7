"""Compaction around the agent's requests: before each one (past ``compact_at`` of the
window the older messages are summarized, by one request to the same model), when the
provider refuses one as too long (compact, then read the largest old tool results as
stubs, then stop with a message naming what is too big), and when the person asks
(``/compact``, ``run --compact``).

Each compaction is recorded in the session file (the summary and how many messages it
stands for) before anything is sent with it, and announced by a
:class:`~tui_agent.core.events.Compacted` event.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import asdict
from typing import Any, Protocol

from tui_agent.core.compaction import (
    KEEP_RECENT,
    SUMMARY_INPUT,
    SUMMARY_MOST,
    SUMMARY_SHARE,
    choose_cut,
    latest_turn,
    summary_request,
    window_in,
)
from tui_agent.core.context import Context, Request
from tui_agent.core.events import (
    Compacted,
    ContextSize,
    ErrorOccurred,
    Event,
    Notice,
    Usage,
)
from tui_agent.core.llm import ChatModel, billed
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.messages import complete
from tui_agent.core.session import SessionWriter
from tui_agent.tools.text import clean

WORTH_IT = 300
"""Tokens below which an automatic compaction is not worth a request."""
MANUAL_KEEP = 2000
"""Tokens of the latest turn ``/compact`` keeps verbatim when the window is unknown."""


class Conversation(Protocol):
    """What compaction needs of the chat loop (the :class:`~tui_agent.core.agent.Agent`)."""

    llm: ChatModel
    messages: list[dict[str, Any]]
    session: SessionWriter | None
    context: Context
    usage: Usage

    def recorded(self, index: int) -> int: ...

    def request(self) -> Request: ...


class Compactor:
    """Compacts one agent's conversation (its :class:`~tui_agent.core.context.Context`)."""

    def __init__(self, agent: Conversation) -> None:
        self.agent = agent

    async def measure(self, request: Request) -> ContextSize:
        a = self.agent
        return await a.context.measure(a.llm, request, a.context.view(a.messages, a.session))

    async def now(self) -> ContextSize:
        """The size of the next request as things stand (``/context``, the meter)."""
        return await self.measure(self.agent.request())

    async def manual(self, instructions: str | None = None) -> AsyncGenerator[Event, None]:
        """``/compact``: summarize the conversation but its latest turn, now (the
        ``instructions`` steer the summary). Yields the :class:`Compacted` event (or a notice
        that there is nothing to compact, or the error), then the new size. Its request
        bills the conversation."""
        a = self.agent
        request = a.request()
        before = await self.measure(request)
        try:
            async with aclosing(self.compact("manual", request, before, instructions)) as events:
                async for event in events:
                    if isinstance(event, Compacted):
                        a.usage = a.usage + event.usage
                    yield event
        except LLMError as exc:
            yield ErrorOccurred(clean(f"could not compact the conversation: {exc}"),
                                kind=exc.kind)
        yield await self.measure(request)

    async def before(self, request: Request) -> AsyncGenerator[Event, None]:
        """Measure ``request``; past ``compact_at``, compact first; past the window still,
        read old large tool results as stubs. Ends with the request's
        :class:`~tui_agent.core.events.ContextSize`."""
        size = await self.measure(request)
        if size.compact_at is not None and size.tokens > size.compact_at:
            async with aclosing(self.compact("auto", request, size)) as events:
                async for event in events:
                    yield event
            size = await self.measure(request)
        if size.window is not None and size.compact_at is not None \
                and size.tokens > size.window:
            async with aclosing(self.shorten("auto", request, size,
                                             size.tokens - size.compact_at)) as events:
                async for event in events:
                    yield event
            size = await self.measure(request)
        yield size

    async def recover(self, exc: LLMError, attempt: int, request: Request
                      ) -> AsyncGenerator[Event, None]:
        """The provider refused ``request`` as too long: the first time compact (or, with
        nothing to compact, shorten), the second time shorten."""
        context, llm = self.agent.context, self.agent.llm
        refused = context.last.tokens if context.last is not None else 0
        # the window the refusal names, else a bit under the size refused
        context.learned = window_in(str(exc)) or (int(refused * 0.9) if refused else None)
        size = await self.measure(request)
        if attempt == 0:
            compacted = False
            async with aclosing(self.compact("overflow", request, size)) as events:
                async for event in events:
                    compacted = compacted or isinstance(event, Compacted)
                    yield event
            if compacted:
                return
        threshold = context.threshold(await context.window(llm)) or int(size.tokens * 0.7)
        async with aclosing(self.shorten("overflow", request, size,
                                         size.tokens - threshold)) as events:
            async for event in events:
                yield event

    async def compact(self, reason: str, request: Request, before: ContextSize,
                      instructions: str | None = None) -> AsyncGenerator[Event, None]:
        """Summarize the messages before the recent ones; a failed summary is a notice
        (``manual``: raised), and the conversation goes on as it was."""
        a = self.agent
        context = a.context
        counter = await context.counter(a.llm)
        window = await context.window(a.llm)
        sizes = context.sizes(a.messages)
        keep = int(window * KEEP_RECENT) if window else 0
        if reason == "manual":  # all but the latest turn, if that is not too big itself
            keep = latest_turn(a.messages, sizes, context.start, keep or MANUAL_KEEP)
        cut = choose_cut(a.messages, sizes, context.start, keep,
                         between_turns=reason == "manual")
        if cut is None or reason != "manual" and sum(sizes[context.start:cut]) < WORTH_IT:
            if reason == "manual":
                yield Notice("nothing to compact yet: the conversation is only the latest "
                             "messages")
            return
        hooked = getattr(a, "pre_compact", None)  # the user's PreCompact hooks, if any
        if hooked is not None:
            heard: list[Event] = []
            blocked = await hooked(reason, instructions or "", heard.append)
            for event in heard:
                yield event
            if blocked:
                return
        words = int(min(SUMMARY_MOST, max(200, (window or 16000) * SUMMARY_SHARE)) * 0.7)
        budget = int(window * SUMMARY_INPUT) if window else max(4000, before.tokens)
        asked = summary_request(context.summary, a.messages[context.start:cut], instructions,
                                budget, words, counter.count)
        try:
            summary, usage = await summarize(a.llm, asked)
        except LLMError as exc:
            if reason == "manual":
                raise
            yield Notice(clean(f"could not compact the conversation ({exc}); it goes on as "
                               "it is"))
            return
        most = (words * 2) * 4 * 2  # twice the words asked for, at about four characters
        summary = summary if len(summary) <= most else summary[:most] + " [summary cut]"
        replaced = cut - context.start
        context.summary, context.start = clean(summary), cut
        context.replaced = a.recorded(cut)
        after = await self.measure(request)
        self._record(reason, before, after, replaced, usage, instructions=instructions)
        yield Compacted(reason, before.tokens, after.tokens, replaced, len(a.messages) - cut,
                        0, context.summary, usage)
        started = getattr(a, "session_start", None)  # SessionStart (compact), as Claude Code
        for event in await started("compact") if started is not None else ():
            yield event

    async def shorten(self, reason: str, request: Request, before: ContextSize, need: int
                      ) -> AsyncGenerator[Event, None]:
        """Read the oldest large tool results as stubs until ``need`` tokens are freed."""
        a = self.agent
        found = a.context.large_results(a.messages, need)
        if not found:
            return
        a.context.stubbed.update(found)
        after = await self.measure(request)
        self._record(reason, before, after, 0, Usage(), stubbed=len(found))
        yield Compacted(reason, before.tokens, after.tokens, 0,
                        len(a.messages) - a.context.start, len(found), "", Usage())

    def too_big(self, exc: LLMError) -> LLMError:
        """The refusal that stands after compacting and shortening, saying what is big."""
        size = self.agent.context.last
        model = self.agent.llm.model or "the model"
        if size is None:
            return exc
        parts = [  # (part, its tokens, what would make it smaller)
            ("the tool definitions", size.tools,
             "switch servers or tools off (/tools, --exclude-tools) or use code mode"),
            ("the system prompt and the servers' instructions", size.system,
             "shorten [model] system_prompt or switch servers off"),
            ("the tool results", size.results,
             "ask for smaller results, or lower [agent] max_tool_output"),
            ("the messages", size.messages + size.summary,
             "send the latest message in smaller parts, or start a new conversation (/new)")]
        biggest, _, advice = max(parts, key=lambda part: part[1])
        listed = ", ".join(f"{name} {tokens:,}" for name, tokens, _ in parts)
        window = f"window {size.window:,} tokens" if size.window else "its window"
        return LLMError("context_window", clean(
            f"the request is still too long for {model} ({window}) after compacting the "
            f"conversation and shortening its tool results: about {size.tokens:,} tokens "
            f"({listed}). The biggest part is {biggest}: {advice}. The provider said: {exc}"))

    def _record(self, reason: str, before: ContextSize, after: ContextSize, replaced: int,
                usage: Usage, *, stubbed: int = 0, instructions: str | None = None) -> None:
        a = self.agent
        if a.session is None:
            return
        facts: dict[str, Any] = {"reason": reason, "tokens_before": before.tokens,
                                 "tokens_after": after.tokens, "replaced": replaced,
                                 "stubbed_now": stubbed, "usage": asdict(usage),
                                 "in_turn": reason != "manual"}
        if instructions:
            facts["instructions"] = instructions
        a.session.compaction(a.context.state(), facts)


async def summarize(llm: ChatModel, messages: list[dict[str, Any]]) -> tuple[str, Usage]:
    """The model's summary (one request, no tools, no thinking where the model can stop:
    no thinking budget is spent on a summary) and what it cost."""
    reply = await complete(llm, messages, reasoning=False)
    if not reply.text.strip():
        raise LLMError("server", "the model's summary came back empty")
    return reply.text.strip(), billed(llm, reply.usage)
