"""The status bar: model, the session's tokens and cost, MCP servers, and what is going on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui_agent.core.events import ContextSize, Usage
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted
from tui_agent.ui.widgets.history import tokens_text


@dataclass(frozen=True)
class ServerCount:
    """Enough of each server's status for the summary."""

    up: int = 0
    total: int = 0
    tools: int = 0
    failed: int = 0

    @classmethod
    def of(cls, states: Sequence[tuple[str, int]]) -> ServerCount:
        """From (state, tool count) pairs; disabled servers are not counted."""
        live = [(s, n) for s, n in states if s != "disabled"]
        up = [n for s, n in live if s in ("connected", "degraded", "idle")]
        return cls(len(up), len(live), sum(up), sum(1 for s, _ in live if s == "failed"))

    def summary(self) -> str:
        if not self.total:
            return "no MCP servers"
        text = f"{self.up}/{self.total} servers, {counted(self.tools, 'tool')}"
        return text + (f" ({self.failed} failed)" if self.failed else "")


def usage_text(usage: Usage) -> str:
    """``12,345 tokens · $0.0123 · cache 91%``: the cache part only once the provider
    reported input read from its prompt cache."""
    tokens = f"{usage.total_tokens:,} tokens"
    cost = "cost unknown" if usage.cost is None else f"${usage.cost:.4f}"
    cached = usage.cache_text()
    return f"{tokens} · {cost}{f' · {cached}' if cached else ''}"


def context_text(size: ContextSize) -> str:
    """``ctx 41k/128k``: the next request's size, of the window when it is known."""
    window = f"/{tokens_text(size.window)}" if size.window else ""
    return f"ctx {tokens_text(size.tokens)}{window}"


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    model: reactive[str] = reactive("no model")
    usage: reactive[Usage] = reactive(Usage, always_update=True)
    servers: reactive[ServerCount] = reactive(ServerCount)
    activity: reactive[str] = reactive("")
    code_mode: reactive[bool] = reactive(False)
    context: reactive[ContextSize | None] = reactive(None)
    """The size of the last (or next) request: the meter, in the warning colour past the
    point where older messages are summarized."""
    config_error: reactive[bool] = reactive(False)
    """An edit to the config could not be applied (the note says why); until it is fixed."""

    def render(self) -> Content:
        parts: list[str | tuple[str, str]] = [clean(self.model)]
        size = self.context
        if size is not None:
            past = size.compact_at is not None and size.tokens > size.compact_at
            parts.append((context_text(size), "$warning bold") if past else context_text(size))
        parts += [usage_text(self.usage), self.servers.summary()]
        if self.code_mode:
            parts.append("code mode")
        if self.activity:
            parts.append(self.activity)
        text = Content.assemble(*[piece for i, part in enumerate(parts)
                                  for piece in ((" · ", part) if i else (part,))])
        if self.config_error:
            text = Content.assemble(text, " · ", ("⚠ config not applied (see the note)",
                                                  "$error"))
        return text
