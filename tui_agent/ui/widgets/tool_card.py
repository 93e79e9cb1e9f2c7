"""A card for one tool call: server, tool, arguments, status, duration, result.

The status follows the call: pending → waiting for approval → running → done or
failed, or denied, or cancelled. A long result folds away (a short one, or an
error, shows at once). Calls a code-mode script makes nest inside its card.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Collapsible, Static

from tui_agent.codemode.meta import EXECUTE, META_SERVER
from tui_agent.codemode.stubs import referenced
from tui_agent.core.skills.tool import BUILTIN_SERVER, SKILL_TOOL
from tui_agent.tools.text import clean
from tui_agent.ui.widgets.messages import plain

if TYPE_CHECKING:
    from tui_agent.core.session import SavedCall

Status = Literal["pending", "waiting", "running", "done", "failed", "denied", "cancelled"]
LABELS: dict[str, str] = {
    "pending": "… pending", "waiting": "? waiting for approval", "running": "● running",
    "done": "✓ done", "failed": "✗ failed", "denied": "⊘ denied", "cancelled": "■ cancelled",
}
ARG_LINES = 6
SCRIPT_LINES = 15
SHORT_RESULT = 3


PREVIEW_CHARS = 20_000
"""Characters of a result a card holds and shows: a result of megabytes (a script's call
reads it whole) is not kept, cleaned and laid out in full by every card that shows it."""


def preview(text: str) -> tuple[str, int]:
    """What a card shows of a result, and how many lines the result has in all. A result
    over :data:`PREVIEW_CHARS` shows its start and a line that says how much is left."""
    if len(text) <= PREVIEW_CHARS:
        lines = text.splitlines() or ["(empty)"]
        return "\n".join(lines), len(lines)
    lines = text[:PREVIEW_CHARS].splitlines()
    if "\n" not in text[PREVIEW_CHARS - 1:PREVIEW_CHARS + 1]:
        lines = lines[:-1] or lines  # the last line is cut: show it whole or not at all
    # Lines as splitlines() counts them (a progress bar's "\r" ends one too), without
    # making the list: a few passes in C over megabytes.
    count = (text.count("\n") + text.count("\r") - text.count("\r\n")
             + (not text.endswith(("\n", "\r"))))
    shown = "\n".join(lines)
    more = f" in {count - len(lines):,} more lines" if count > len(lines) else ""
    return shown + f"\n… {len(text) - len(shown):,} more characters{more} not shown", count


def arguments_text(arguments: dict[str, Any]) -> str:
    if not arguments:
        return "(no arguments)"
    return json.dumps(arguments, indent=2, ensure_ascii=False)


class ToolCard(Vertical):
    DEFAULT_CSS = """
    ToolCard {
        height: auto; margin: 1 0 0 0; padding: 0 1;
        border: round $panel-lighten-2; background: $surface;
    }
    ToolCard .head { height: 1; }
    ToolCard .name { width: 1fr; text-style: bold; color: $foreground; }
    ToolCard .status { width: auto; color: $text-muted; }
    ToolCard .args { color: $text-muted; }
    ToolCard .by { color: $text-muted; text-style: italic; }
    ToolCard .result { color: $foreground; }
    ToolCard .kids { height: auto; }
    ToolCard .uses { color: $text-muted; text-style: italic; }
    ToolCard .script { background: $panel; padding: 0 1; }
    ToolCard.-waiting { border: round $warning; }
    ToolCard.-waiting .status { color: $warning; }
    ToolCard.-running .status { color: $accent; }
    ToolCard.-done .status { color: $success; }
    ToolCard.-failed { border: round $error 60%; }
    ToolCard.-failed .status, ToolCard.-denied .status { color: $error; }
    ToolCard.-cancelled .status { color: $warning; }
    ToolCard Collapsible { border: none; padding: 0; margin: 0; background: $surface; }
    ToolCard .progress { color: $text-muted; }
    ToolCard .log { color: $warning; }
    ToolCard .log.-error { color: $error; }
    """

    def __init__(self, call_id: str, server: str, tool: str,
                 arguments: dict[str, Any], *, servers: Iterable[str] | None = None,
                 nested: bool = False) -> None:
        super().__init__(classes="-pending")
        self.call_id = call_id
        self.server, self.tool, self.arguments = server, tool, arguments
        code = arguments.get("code")
        self.script: str | None = clean(code) if server == META_SERVER and tool == EXECUTE \
            and isinstance(code, str) else None
        """A code-mode script: shown highlighted, with the tools it appears to use."""
        self.servers = list(servers) if servers is not None else None
        self.nested = nested
        """Made by a script: arguments on one line when they fit."""
        self.status: Status = "pending"
        self._label = LABELS["pending"]
        self._shown: Static | None = None
        self.reason: str | None = None
        self.by: str | None = None
        """What decided the call without asking the person (a mode, a rule, a server's
        list, a hook, a flag): shown on a dim line, and after ``denied`` in the header."""
        self._by_line: Static | None = None
        self._progress: Static | None = None
        self._bar: tuple[float, float | None, str | None] | None = None
        self._task_said: tuple[str, str, str | None] | None = None
        """The call runs as a task: its id, status and the server's word on it."""
        self.saved_result: tuple[str, SavedCall | bool] | None = None
        """A resumed conversation's result: its text and how the call ended (or, from a
        file that did not say, whether the text reads as a failure), shown once the card
        mounts."""

    def title(self) -> str:
        """``server · tool``; a call of the built-in ``skill`` tool is titled with the
        skill (and the file it reads)."""
        if self.server == BUILTIN_SERVER and self.tool == SKILL_TOOL:
            said = [str(self.arguments.get(k)) for k in ("name", "file") if self.arguments.get(k)]
            return " · ".join(["skill", *said])
        return f"{self.server} · {self.tool}" if self.server else self.tool

    def compose(self) -> ComposeResult:
        title = self.title()
        with Horizontal(classes="head"):
            yield Static(plain(title), classes="name")
            self._shown = Static(plain(self._label), classes="status")
            yield self._shown
        if self.script is not None:
            yield from self._script(self.script)
        else:
            compact = json.dumps(self.arguments, ensure_ascii=False)
            lines = [compact] if self.nested and len(compact) <= 90 else \
                arguments_text(self.arguments).splitlines()
            shown = "\n".join(lines[:ARG_LINES])
            if len(lines) > ARG_LINES:
                shown += f"\n… {len(lines) - ARG_LINES} more lines"
            yield Static(plain(shown), classes="args")
        if self._by_line is not None:
            yield self._by_line
        yield Vertical(classes="kids")

    def decided(self, decision: str, reason: str | None = None, by: str | None = None) -> None:
        """The gate's answer (``approved``, ``denied``, ``auto``). One made without asking
        the person (``by`` set, and not "you") says what made it: ``auto · auto mode``,
        ``auto · the auto list of time`` on a dim line; a denial says it in the header
        (``⊘ denied · plan mode``), its reason on the dim line unless it is only words for
        the model (plan mode's)."""
        from tui_agent.core.permissions.modes import PLAN_REFUSAL

        if by and by != "you":
            self.by = by
            if decision != "denied":
                line = f"{decision} · {by}"
            else:
                line = reason if reason and reason != PLAN_REFUSAL else ""
            if line:
                self._by_line = Static(plain(line), classes="by")
                if self._shown is not None:  # composed: mounted now, else composed with it
                    self.mount(self._by_line, before=self.query_one(".kids"))
        self.set_status("denied" if decision == "denied" else "running", reason=reason)

    def _script(self, code: str) -> ComposeResult:
        uses = referenced(code, self.servers or None)
        yield Static(plain("uses " + ", ".join(uses) if uses else
                           "uses no tool by name (each call is still asked about)"),
                     classes="uses")
        lines = code.splitlines()
        yield Static(highlight("\n".join(lines[:SCRIPT_LINES]), language="python"),
                     classes="script")
        if len(lines) > SCRIPT_LINES:
            rest = Static(highlight("\n".join(lines[SCRIPT_LINES:]), language="python"),
                          classes="script")
            yield Collapsible(rest, title=f"{len(lines) - SCRIPT_LINES} more lines",
                              collapsed=True)

    def on_mount(self) -> None:
        if self.saved_result is None:
            return
        text, ended = self.saved_result
        if not isinstance(ended, bool):
            self.restore(text, ended)
        elif text.startswith("cancelled by the user"):  # an older file: guessed from words
            self.set_status("cancelled")
        else:
            if text.startswith("The user denied"):
                self.set_status("denied")
            self.show_result(text, is_error=ended)

    def restore(self, text: str, saved: SavedCall) -> None:
        """End as the call ended live: its status (a denial with its reason), its duration,
        its result, and the calls a script made, each nested with its own ending."""
        kids = self.query_one(".kids", Vertical)
        for call in saved.calls:
            card = ToolCard(call.id, call.server or "", call.tool, call.arguments,
                            nested=True)
            card.saved_result = (call.text, call)
            kids.mount(card)
        if saved.approval and saved.by:
            self.decided(saved.approval, saved.reason, saved.by)
        if saved.status in ("denied", "cancelled"):  # live, neither showed a result
            self.set_status(saved.status, reason=saved.reason)
        else:
            self.show_result(text, is_error=saved.status == "failed", duration=saved.took)

    def set_status(self, status: Status, *, reason: str | None = None,
                   duration: float | None = None) -> None:
        """Show ``status`` (a card asked about before it has composed shows it once it
        does)."""
        self.remove_class(f"-{self.status}")
        self.status, self.reason = status, reason or self.reason
        self.add_class(f"-{status}")
        label = LABELS[status]
        if duration is not None and status in ("done", "failed"):
            label += f" · {duration:.2f} s"
        if status == "denied" and self.by:
            label += f" · {self.by}"
        elif status == "denied" and self.reason:
            label += f": {self.reason}"
        self._label = label
        if self._shown is not None:
            self._shown.update(plain(label))

    def show_result(self, text: str, *, is_error: bool, duration: float | None = None) -> None:
        if self.status == "denied":
            return  # the refusal is the result; the card already says so
        self.set_status("failed" if is_error else "done", duration=duration)
        if self._progress is not None:
            self._progress.remove()
            self._progress = None
        shown, count = preview(text)
        body = Static(plain(shown), classes="result")
        if is_error or (count <= SHORT_RESULT and len(text) <= PREVIEW_CHARS):
            self.mount(body)
        else:
            title = f"result · {count:,} lines, {len(text):,} characters"
            self.mount(Collapsible(body, title=title, collapsed=True))

    def show_progress(self, done: float, total: float | None, message: str | None) -> None:
        """The server's report on the call: a bar when it knows the total, and what it
        says it is doing; gone when the result comes."""
        self._bar = (done, total, message)
        self._show_line()

    def show_task(self, task: str, status: str, message: str | None) -> None:
        """The call runs as a task: its status and what the server says of it, on the
        progress line (with the bar, when the server reports progress too)."""
        self._task_said = (task, status, message)
        self._show_line()

    def _show_line(self) -> None:
        if self.status in ("done", "failed", "denied", "cancelled"):
            return
        if self._progress is None:
            self._progress = Static("", classes="progress")
            self.mount(self._progress, before=self.query_one(".kids"))
        bar = progress_line(*self._bar) if self._bar is not None else None
        if self._task_said is not None:
            self._progress.update(task_line(*self._task_said, bar))
        elif bar is not None:
            self._progress.update(bar)

    def show_log(self, level: str, text: str) -> None:
        """A warning (or worse) the server logged during the call."""
        line = Static(plain(f"⚠ {level}: {text}"), classes="log")
        line.set_class(level != "warning", "-error")
        self.mount(line, before=self.query_one(".kids"))

    async def nest(self, card: ToolCard) -> None:
        """A call made inside this one (a code-mode script's)."""
        await self.query_one(".kids", Vertical).mount(card)


BAR = 24


def task_line(task: str, status: str, message: str | None, bar: Content | None) -> Content:
    """``task 3f2a1b9c… working — ━━━━╺─── 40% gathering sources``: the task's id (its
    start), status, then the progress bar if any, else what the server says of it. Server
    text is cleaned and never read as markup."""
    short = clean(task)[:8] + ("…" if len(task) > 8 else "")
    parts: list[str | tuple[str, str] | Content] = [f"task {short} ", (clean(status), "bold")]
    if bar is not None:
        parts += [" — ", bar]
    elif message:
        parts.append(f" — {clean(message)}")
    return Content.assemble(*parts)


def progress_line(done: float, total: float | None, message: str | None) -> Content:
    """``━━━━━━━━━╺───────────── 40% indexing src``: a bar when the total is known (the
    count so far when not), then the server's message."""
    said = f"  {message}" if message else ""
    if not total:
        return Content.assemble((f"{done:g} so far", "bold"), said)
    ratio = max(0.0, min(done / total, 1.0))
    filled = round(ratio * BAR)
    return Content.assemble(("━" * filled, "$accent"), ("─" * (BAR - filled), "$panel-lighten-2"),
                            (f" {ratio:4.0%}", "bold"), said)
