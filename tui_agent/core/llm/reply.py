"""What a model's reply becomes: :class:`Reply` and its :class:`ToolCallRequest` s, and
:class:`StreamCut` for a reply cut off mid-stream."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.events import Usage
from tui_agent.core.llm.errors import LLMError


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One tool call as the model sent it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class Reply:
    """A finished (or, with ``incomplete``, cut) assistant reply."""

    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    incomplete: bool = False

    def take(self, other: Reply) -> None:
        """Become ``other`` (a reply filled in by someone else)."""
        self.text, self.tool_calls, self.finish_reason = (other.text, other.tool_calls,
                                                          other.finish_reason)
        self.usage, self.incomplete = other.usage, other.incomplete

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
        return msg


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
