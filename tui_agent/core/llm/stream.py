"""A streamed reply put together: :class:`Assembly` reads litellm's chunks one by one and
gives back the events to pass on at once (:class:`~tui_agent.core.events.TextDelta`,
:class:`~tui_agent.core.events.ReasoningDelta`), while it gathers the reply's text, its
reasoning, its thinking blocks and its tool calls; :meth:`Assembly.fill` then writes them
into the :class:`~tui_agent.core.llm.reply.Reply`.

Thinking blocks (Anthropic's, through litellm's ``delta.thinking_blocks``) come as one
block per piece of text and then one carrying only the signature: the pieces are joined
into one block, the signature put on it, and a ``redacted_thinking`` block is kept as it
came (opaque). Anthropic refuses a tool turn whose reply lost them. The retries and the
cut-stream rules live in :mod:`tui_agent.core.llm.client`.
"""

from __future__ import annotations

from typing import Any

from tui_agent.core.events import ReasoningDelta, TextDelta
from tui_agent.core.llm.reply import Reply, ToolCallRequest


class Assembly:
    """One reply's pieces as they stream in."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.reasoning: list[str] = []
        self.blocks: list[dict[str, Any]] = []
        self._open = False
        """Whether the last block is thinking still streaming (no signature yet)."""
        self.calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
        self.finish_reason: str | None = None
        self.usage: Any = None

    @property
    def started(self) -> bool:
        """Whether anything of the reply has arrived (a retry would repeat it)."""
        return bool(self.parts or self.calls or self.reasoning or self.blocks)

    def feed(self, chunk: Any) -> list[TextDelta | ReasoningDelta]:
        """Take one chunk; the events it brings, in order (reasoning before text)."""
        events: list[TextDelta | ReasoningDelta] = []
        self.usage = getattr(chunk, "usage", None) or self.usage
        choices = chunk.choices
        if not choices:
            return events
        choice = choices[0]
        delta = choice.delta
        thought = getattr(delta, "reasoning_content", None)
        if isinstance(thought, str) and thought:
            self.reasoning.append(thought)
            events.append(ReasoningDelta(thought))
        for block in getattr(delta, "thinking_blocks", None) or ():
            self._block(dict(block))
        if delta.content:
            self.parts.append(delta.content)
            events.append(TextDelta(delta.content))
        if delta.tool_calls:
            _merge_tool_deltas(self.calls, delta.tool_calls)
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        return events

    def _block(self, block: dict[str, Any]) -> None:
        if block.get("type") != "thinking":  # redacted_thinking: opaque, kept as it came
            self.blocks.append(block)
            self._open = False
            return
        if not self._open:
            self.blocks.append({"type": "thinking", "thinking": ""})
            self._open = True
        last = self.blocks[-1]
        last["thinking"] += str(block.get("thinking") or "")
        if block.get("signature"):
            last["signature"] = block["signature"]
            self._open = False

    def fill(self, reply: Reply, *, incomplete: bool) -> None:
        """Write what arrived into ``reply``; tool calls only when it is complete."""
        reply.text = "".join(self.parts)
        reply.reasoning = "".join(self.reasoning) or "".join(
            str(b.get("thinking", "")) for b in self.blocks)
        reply.thinking_blocks = [dict(b) for b in self.blocks]
        reply.incomplete = incomplete
        if self.finish_reason:
            reply.finish_reason = self.finish_reason
        if not incomplete:  # half a tool call must never run
            reply.tool_calls = [ToolCallRequest(cid or f"call_{i}", name, args)
                                for i, (cid, name, args) in sorted(self.calls.items())]


def _merge_tool_deltas(calls: dict[int, list[str]], deltas: Any) -> None:
    for d in deltas:
        slot = calls.setdefault(d.index or 0, ["", "", ""])
        if d.id:
            slot[0] = d.id  # verbatim: Gemini's thought signature rides inside it
        fn = d.function
        if fn is not None:
            if fn.name:
                slot[1] = fn.name
            if fn.arguments:
                slot[2] += fn.arguments
