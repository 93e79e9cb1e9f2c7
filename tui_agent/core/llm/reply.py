"""What a model's reply becomes: :class:`Reply` and its :class:`ToolCallRequest` s, and
:class:`StreamCut` for a reply cut off mid-stream."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.events import StopReason, Usage
from tui_agent.core.llm.errors import LLMError


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One tool call as the model sent it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


CUT_SHORT: dict[str, StopReason] = {"length": "max_tokens", "max_tokens": "max_tokens",
                                    "content_filter": "refusal", "refusal": "refusal"}
"""A final reply's finish reason (OpenAI's words, as litellm maps every provider's, and
the providers' own, passed through by some OpenAI-compatible servers) -> how the turn
ended, when the reply did not simply end."""


def cut_short(finish_reason: str | None, max_tokens: int | None) -> tuple[StopReason, str] | None:
    """How a turn whose last reply ended with ``finish_reason`` ended, and what to tell the
    person, when the reply was stopped rather than finished; None when it just ended."""
    reason = CUT_SHORT.get(finish_reason or "")
    if reason == "max_tokens":
        limit = (f"[model] max_tokens = {max_tokens}" if max_tokens
                 else "the provider's default; set [model] max_tokens to raise it")
        return reason, ("the reply stopped at the model's output-token limit "
                        f"({limit}): it is cut short (a local server stops so too when its "
                        "context window is full). Say \"go on\" to have it continue.")
    if reason == "refusal":
        return reason, ("the provider stopped the reply (finish reason "
                        f"{finish_reason}: a content filter or the model's refusal): "
                        "what came before is kept.")
    return None


@dataclass(slots=True)
class Reply:
    """A finished (or, with ``incomplete``, cut) assistant reply."""

    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    incomplete: bool = False
    reasoning: str = ""
    """The model's thinking as it streamed (shown apart; kept for the display on resume)."""
    thinking_blocks: list[dict[str, Any]] = field(default_factory=list)
    """Anthropic's thinking blocks, whole: each joined, with its signature (or
    ``redacted_thinking``, opaque). The provider needs them back with the tool results."""

    def take(self, other: Reply) -> None:
        """Become ``other`` (a reply filled in by someone else)."""
        self.text, self.tool_calls, self.finish_reason = (other.text, other.tool_calls,
                                                          other.finish_reason)
        self.usage, self.incomplete = other.usage, other.incomplete
        self.reasoning, self.thinking_blocks = other.reasoning, other.thinking_blocks

    def message(self) -> dict[str, Any]:
        """The OpenAI-format assistant message to keep in the history."""
        # Providers reject a null content unless the message carries tool calls.
        content = self.text if self.text or not self.tool_calls else None
        msg: dict[str, Any] = {"role": "assistant", "content": content}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls]
        blocks = [b for b in self.thinking_blocks if whole(b)]
        if blocks:
            msg["thinking_blocks"] = blocks
        if self.reasoning:
            msg["reasoning_content"] = self.reasoning
        return msg


def whole(block: Any) -> bool:
    """A thinking block a provider takes back: signed, or redacted (opaque data). A block
    a cut stream left without its signature is refused."""
    return isinstance(block, dict) and (
        block.get("type") == "redacted_thinking" or bool(block.get("signature")))


class StreamCut(LLMError):
    """The stream broke after content arrived; ``partial`` holds what did."""

    def __init__(self, message: str, partial: Reply) -> None:
        super().__init__("stream_cut", message)
        self.partial = partial


def billed(model: object, usage: Usage) -> Usage:
    """``usage``, or if it billed no tokens ``model``'s :meth:`LLM.unbilled` (0.0 or unknown)."""
    return usage if usage.total_tokens else getattr(model, "unbilled", Usage)()


def rough_count(text: str) -> int:
    """Tokens of ``text`` at about four characters each: for a model with no tokenizer."""
    return (len(text) + 3) // 4
