"""One round of the chat loop: one request to the model and its reply.

The request is measured first (and the conversation compacted past ``compact_at``), then
streamed: each piece of text is noted in the session file as it comes, and the reply is
recorded however the stream ends (finished, cut by the provider, or cancelled: then marked
incomplete). A refusal as too long is met by compacting, then by reading old tool results
as stubs; a third refusal ends the turn with an error naming what is too big. The
:class:`~tui_agent.core.agent.Agent` runs the rounds of a turn and the tool calls between
them; :mod:`tui_agent.core.compactor` does the compacting.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, Protocol

from tui_agent.core.compaction import overflowed
from tui_agent.core.compactor import Compactor
from tui_agent.core.context import Context, Request
from tui_agent.core.events import Event, ReasoningDelta, TextDelta, Usage
from tui_agent.core.llm import ChatModel, Reply, StreamCut
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.session import SessionWriter


class Loop(Protocol):
    """What a round needs of the chat loop (the :class:`~tui_agent.core.agent.Agent`)."""

    llm: ChatModel
    messages: list[dict[str, Any]]
    session: SessionWriter | None
    context: Context
    compactor: Compactor
    conversation_id: str
    """The conversation's id: its session file's, or one of its own without a file."""

    def record(self, message: dict[str, Any], *, incomplete: bool = False,
               usage: Usage | None = None, sync: bool = True) -> None: ...


async def exchange(loop: Loop, request: Request, reply: Reply) -> AsyncGenerator[Event, None]:
    """Send ``request`` with the conversation and stream the answer into ``reply``
    (compacting first, or on a refusal as too long, as the module says)."""
    for attempt in range(3):
        async with aclosing(loop.compactor.before(request)) as before:
            async for event in before:
                yield event
        try:
            async with aclosing(stream_reply(loop, request, reply)) as stream:
                async for item in stream:
                    yield item
        except LLMError as exc:
            if isinstance(exc, StreamCut) or not overflowed(exc):
                raise
            if attempt == 2:
                raise loop.compactor.too_big(exc) from None
            async with aclosing(loop.compactor.recover(exc, attempt, request)) as fixing:
                async for event in fixing:
                    yield event
            continue
        loop.context.reported(reply.usage.prompt_tokens)
        return


async def stream_reply(loop: Loop, request: Request,
                       reply: Reply) -> AsyncGenerator[Event, None]:
    """Stream one reply into ``reply`` and record it, however the stream ends. Reasoning
    and text are passed on as they come, in the order they come."""
    view = loop.context.view(loop.messages, loop.session)
    messages = [{"role": "system", "content": request.system}, *view] \
        if request.system else view
    parts: list[str] = []
    thought: list[str] = []
    done = False
    if hasattr(loop.llm, "session_id"):  # litellm's client names the conversation
        setattr(loop.llm, "session_id",  # noqa: B010 (not every ChatModel has one)
                loop.session.id if loop.session is not None else loop.conversation_id)
    try:
        async with aclosing(loop.llm.stream(messages, request.tools)) as stream:
            async for item in stream:
                if isinstance(item, Reply):
                    reply.take(item)
                    done = True
                    continue
                if isinstance(item, TextDelta):
                    parts.append(item.delta)
                    if loop.session is not None:
                        loop.session.partial(item.delta)
                elif isinstance(item, ReasoningDelta):
                    thought.append(item.delta)
                yield item
    except StreamCut as cut:
        reply.take(cut.partial)
        if reply.text or reply.reasoning:
            loop.record(reply.message(), incomplete=True, usage=reply.usage)
        raise
    finally:
        if not done and not reply.incomplete and (parts or thought):
            # Cancelled mid-stream, in the text or still thinking: keep what arrived, marked
            # incomplete (a half thinking block has no signature: it is never sent back).
            reply.text, reply.incomplete = "".join(parts), True
            reply.reasoning = "".join(thought)
            loop.record(reply.message(), incomplete=True)
    if done:
        loop.record(reply.message(), usage=reply.usage)
