"""Sampling: a server asks the client's model to write something (``sampling/createMessage``).
It passes the same gate as a tool call: the person sees the server, its system prompt and
its messages, and may edit or deny them; the chat's model (or ``[model] sampling_model``)
answers, within the server's ``maxTokens``; and the reply is shown before it goes back.

The request becomes a :class:`SampleRequest` of plain text (the server's words, cleaned);
the front end's :class:`Sampler` decides and runs it. No tools run inside sampling: this
client does not declare ``sampling.tools``, and a request that brings tools is refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.tools.results import describe_block
from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from mcp.client.session import SamplingFnT

MAX_TOKENS_CAP = 8_192
"""The most tokens one sampling reply may take, whatever the server asks."""
DECLINED = -1
"""The JSON-RPC error code of a sampling request the person declined (the spec's)."""


@dataclass(frozen=True)
class SampleRequest:
    """What a server wants the model to answer, as the person sees (and may edit) it."""

    server: str
    messages: tuple[tuple[str, str], ...]
    """``(role, text)`` of each message, oldest first."""
    system_prompt: str | None
    max_tokens: int
    temperature: float | None = None


Review = Callable[[SampleRequest], Awaitable[SampleRequest | None]]
"""The person's look at a request: the request as it should run (maybe edited), or None."""
Confirm = Callable[[SampleRequest, str], Awaitable[bool]]
"""The person's look at the model's reply: whether it goes back to the server."""
Complete = Callable[[SampleRequest], Awaitable[tuple[str, str]]]
"""Run a request on the model: ``(reply text, model name)``."""


@dataclass(frozen=True)
class Sampler:
    """A front end's sampling: how it asks the person, and how it runs the model."""

    review: Review
    confirm: Confirm
    complete: Complete


def sample_request(server: str, params: Any) -> SampleRequest:
    """The plain-text form of ``CreateMessageRequestParams`` (images and other blocks are
    named, not passed on)."""
    messages = []
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        text = "\n".join(getattr(b, "text", None) or describe_block(b) or "" for b in blocks)
        messages.append((str(message.role), clean(text)))
    system = clean(params.system_prompt) if params.system_prompt else None
    return SampleRequest(clean(server), tuple(messages), system,
                         max(1, min(int(params.max_tokens), MAX_TOKENS_CAP)), params.temperature)


def as_messages(request: SampleRequest) -> list[dict[str, Any]]:
    """The request as chat messages for the model."""
    head = [{"role": "system", "content": request.system_prompt}] if request.system_prompt \
        else []
    return head + [{"role": role, "content": text} for role, text in request.messages]


def sampling_handler(server: str, sampler: Sampler) -> SamplingFnT:
    """The SDK's sampling callback for ``server``."""
    async def handle(context: Any, params: Any) -> Any:
        from mcp import types  # here, not at the start: the server spawns before the SDK loads

        if getattr(params, "tools", None):
            return types.ErrorData(code=types.INVALID_PARAMS,
                                   message="tui-agent runs no tools inside sampling")
        request = await sampler.review(sample_request(server, params))
        if request is None:
            return types.ErrorData(code=DECLINED, message="the user declined the request")
        try:
            reply, model = await sampler.complete(request)
        except Exception as exc:  # the model's failure is the server's to read
            return types.ErrorData(code=types.INTERNAL_ERROR,
                                   message=f"the model failed: {clean(str(exc))[:300]}")
        if not await sampler.confirm(request, reply):
            return types.ErrorData(code=DECLINED, message="the user did not send the reply")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=reply),
            model=model, stop_reason="endTurn")

    return handle
