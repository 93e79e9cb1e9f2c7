"""The status bar: model, the session's tokens and cost, MCP servers, and what is going on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted
from tui_agent.ui.widgets.history import tokens_text

if TYPE_CHECKING:  # a turn's events: not needed to draw the first frame
    from tui_agent.core.events import ContextSize, Usage


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


SEP = " · "
"""Between two parts of the bar."""

SHORTER = ("tokens", "servers", "servers", "model", "config", "tokens", "code", "cache",
           "cost", "mode", "mode")
"""What gives way, in turn, when the bar is too narrow: each name steps that part to its
next shorter form (the token count to ``33k tok``, the servers to their failures only,
the model to its name without the provider, ...), until the bar fits. The activity (what
is going on, and how to stop it) and the context meter never give way; a part is shown
whole or not at all."""


@dataclass(frozen=True)
class Part:
    """One part of the bar, in its forms from the fullest to the shortest ("": gone)."""

    key: str
    forms: tuple[str, ...]
    style: str = ""


def usage_parts(usage: Usage | None, priced: bool | None = None) -> list[Part]:
    """``12,345 tokens · $0.0123 · cache 91%``: the cache part only once the provider
    reported input read from its prompt cache. None (no turn yet) is no tokens, no cost;
    for a model with no known price (``priced`` False: a local one) the cost is unknown
    from the start, not ``$0.0000`` until the first reply says otherwise."""
    tokens, cost = (usage.total_tokens, usage.cost) if usage is not None else (0, 0.0)
    if priced is False and not tokens:
        cost = None
    parts = [Part("tokens", (f"{tokens:,} tokens", f"{tokens_text(tokens)} tok", "")),
             Part("cost", ("cost unknown", "cost ?") if cost is None else (f"${cost:.4f}",))]
    if usage is not None and (cached := usage.cache_text()):
        parts.append(Part("cache", (cached, "")))
    return parts


def context_text(size: ContextSize) -> str:
    """``ctx 41k/128k``: the next request's size, of the window when it is known."""
    window = f"/{tokens_text(size.window)}" if size.window else ""
    return f"ctx {tokens_text(size.tokens)}{window}"


def fit(parts: Sequence[Part], width: int) -> list[Part]:
    """``parts``, each in the fullest form that lets the bar fit ``width`` cells (those
    :data:`SHORTER` names first giving way); past all of that, as short as they go."""
    steps = dict.fromkeys((p.key for p in parts), 0)

    def shown() -> list[Part]:
        out = []
        for part in parts:
            form = part.forms[min(steps[part.key], len(part.forms) - 1)]
            if form:
                out.append(Part(part.key, (form,), part.style))
        return out

    fitted = shown()
    for key in SHORTER:
        if _cells(fitted) <= width:
            break
        if key in steps:
            steps[key] += 1
            fitted = shown()
    return fitted


def _cells(parts: Sequence[Part]) -> int:
    return sum(Content(p.forms[0]).cell_length for p in parts) + len(SEP) * (len(parts) - 1)


MODE_PARTS: dict[str, tuple[Part, ...]] = {
    "plan": (Part("mode", ("plan mode: read-only", "plan mode", "plan"), "bold"),),
    "auto": (Part("mode", ("auto: tools run without asking", "auto mode", "auto"),
                  "$warning bold"),),
}
"""The permission mode, first in the bar (the default mode says nothing)."""


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar {
        height: 1; padding: 0 1; background: $panel; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    model: reactive[str] = reactive("no model")
    usage: reactive[Usage | None] = reactive(None, always_update=True)
    """None until a turn reports (shown as no tokens, no cost)."""
    servers: reactive[ServerCount] = reactive(ServerCount)
    activity: reactive[str] = reactive("")
    code_mode: reactive[bool] = reactive(False)
    context: reactive[ContextSize | None] = reactive(None)
    """The size of the last (or next) request: the meter, in the warning colour past the
    point where older messages are summarized."""
    priced: reactive[bool | None] = reactive(None)
    """Whether the model has a known price (None: not known yet); False shows "cost
    unknown" before the first reply."""
    config_error: reactive[bool] = reactive(False)
    """An edit to the config could not be applied (the note says why); until it is fixed."""
    mode: reactive[str] = reactive("default")
    """The permission mode (:data:`MODE_PARTS`): nothing said in ``default``; ``plan``
    plainly (in bold, the bar's other words being dim); ``auto`` in the warning colour."""

    def parts(self) -> list[Part]:
        """Everything the bar would say with room enough, in order."""
        model = clean(self.model)
        parts = [*MODE_PARTS.get(self.mode, ()),
                 Part("model", (model, model.rsplit("/", 1)[-1]))]
        size = self.context
        if size is not None:
            past = size.compact_at is not None and size.tokens > size.compact_at
            parts.append(Part("ctx", (context_text(size),), "$warning bold" if past else ""))
        parts += usage_parts(self.usage, self.priced)
        servers = self.servers
        failed = (f"{counted(servers.failed, 'server')} failed",) if servers.failed else ()
        parts.append(Part("servers", (servers.summary(), *failed, "")))
        if self.code_mode:
            parts.append(Part("code", ("code mode", "code")))
        if self.activity:
            parts.append(Part("activity", (clean(self.activity),)))
        if self.config_error:
            parts.append(Part("config", ("⚠ config not applied (see the note)",
                                         "⚠ config not applied"), "$error"))
        return parts

    def render(self) -> Content:
        """The parts that fit the bar's width, whole (see :data:`SHORTER`)."""
        width = self.content_size.width
        parts = fit(self.parts(), width) if width > 0 else self.parts()
        pieces: list[str | tuple[str, str]] = []
        for part in parts:
            if pieces:
                pieces.append(SEP)
            pieces.append((part.forms[0], part.style) if part.style else part.forms[0])
        return Content.assemble(*pieces)
