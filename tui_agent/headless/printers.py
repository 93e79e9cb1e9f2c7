"""How a headless run shows its events: :class:`TextPrinter` (the reply on stdout as
it streams, tool activity, notices and errors on stderr, and with ``--show-reasoning``
the model's thinking on stderr too, dim on a terminal) and :class:`JsonPrinter` (one
JSON object a line, the ``--output jsonl`` contract, a sub-agent's events with their
``agent``; :mod:`.agent_lines` says what the text shows of them). Secrets are masked in both, and
untrusted text loses its control characters."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from tui_agent.config.interpolate import StreamMasker, mask_json
from tui_agent.config.printable import shown as printable
from tui_agent.core.events import (
    ApprovalDecided,
    Compacted,
    ErrorOccurred,
    Event,
    EventMasker,
    InitDone,
    Notice,
    ReasoningDelta,
    Retrying,
    ServerLog,
    SkillUsed,
    TaskUpdate,
    TextDelta,
    ToolCallStarted,
    ToolProgress,
    ToolResult,
    TurnDone,
)
from tui_agent.headless.agent_lines import agent_line, is_agents
from tui_agent.headless.progress import ProgressLines
from tui_agent.tools.text import StreamCleaner, clean

FIRST_LINE = 200
"""Characters of a tool's result shown on its line."""
_VISIBLE = re.compile(r"\S")


def first_line(text: str) -> str:
    """The first line of ``text`` that says something, cleaned, up to :data:`FIRST_LINE`
    characters, or ``(empty)``. Only the start of the text is looked at: a result of
    megabytes is not copied (cleaned, stripped, split) to show one line of it."""
    start = _VISIBLE.search(text)
    if start is None:
        return "(empty)"
    head = clean(text[start.start():start.start() + FIRST_LINE * 20]).strip()
    return head.splitlines()[0][:FIRST_LINE] if head else "(empty)"


def skill_line(event: SkillUsed) -> str:
    """What a call of the ``skill`` tool did, in a line."""
    name = clean(event.name)
    if event.state == "refused":
        return f"skill {name} refused: {clean(event.reason)}"
    if event.state == "read":
        return f"skill {name}: read {clean(event.file or '')} (~{event.tokens:,} tokens)"
    return f"skill {name} loaded ({event.origin}, ~{event.tokens:,} tokens): {clean(event.where)}"


def task_line(task: str, status: str, message: str | None) -> str:
    """``task 3f2a1b9c… working: Gathering sources...`` (server text, cleaned)."""
    short = clean(task)[:8] + ("…" if len(task) > 8 else "")
    return f"task {short} {clean(status)}{f': {clean(message)}' if message else ''}"


class Printer(Protocol):
    def show(self, event: Event) -> None: ...


@dataclass
class TextPrinter:
    """The reply on stdout as it streams; tool activity, notices and errors on stderr."""

    out: IO[str]
    err: IO[str]
    secrets: frozenset[str] = frozenset()
    verbose: bool = False
    """Show what servers log (``--verbose``)."""
    reasoning: bool = False
    """Stream the model's thinking to stderr (``--show-reasoning``)."""
    dim: bool | None = None
    """Show the thinking dim (None: when stderr is a terminal)."""
    _mid_line: bool = field(default=False, init=False)
    _thought: Thought = field(init=False)
    _masker: StreamMasker = field(init=False)
    _cleaner: StreamCleaner = field(init=False, default_factory=StreamCleaner)
    _inner: set[str] = field(init=False, default_factory=set)
    """Ids of calls made by scripts: their lines are indented under the script."""
    _progress: ProgressLines = field(init=False)
    """Progress reports, at a pace a person can read (one line rewritten on a terminal)."""

    def __post_init__(self) -> None:
        self._masker = StreamMasker(self.secrets)
        self._progress = ProgressLines(self.err, self.secrets)
        dim = self.dim if self.dim is not None else _is_terminal(self.err)
        self._thought = Thought(self.err, self.secrets, dim)

    def _text(self, text: str) -> None:
        if text:
            self._progress.end_line()
            self.out.write(text)
            self.out.flush()
            self._mid_line = not text.endswith("\n")

    def _end_reply_line(self) -> None:
        """Before a line on stderr: the reply's text so far, and its line ended."""
        self._text(self._masker.feed(self._cleaner.flush()) + self._masker.flush())
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    def _note(self, text: str) -> None:
        self._progress.end_line()
        self._thought.end()
        self._end_reply_line()
        self.err.write(printable(text, self.secrets) + "\n")
        self.err.flush()

    def show(self, event: Event) -> None:
        if is_agents(event):  # a sub-agent's: its steps, not its streamed words
            line = agent_line(event, first_line(event.text)
                              if isinstance(event, ToolResult) else "")
            if line is not None:
                self._note(line)
            return
        if not isinstance(event, ReasoningDelta):
            self._thought.end()  # whatever comes after the thinking ends its line
        match event:
            case ReasoningDelta(delta=delta) if self.reasoning:
                self._progress.end_line()
                self._end_reply_line()
                self._thought.show(delta)
            case TextDelta(delta=delta):
                self._text(self._masker.feed(self._cleaner.feed(delta)))
            case ToolCallStarted(name="executeToolCode", arguments={"code": str(code)},
                                 parent=None):
                lines = clean(code).splitlines()
                shown = "".join(f"\n    | {row}" for row in lines[:40])
                more = f"\n    | ... {len(lines) - 40} more lines" if len(lines) > 40 else ""
                self._note(f"→ executeToolCode (a script):{shown}{more}")
            case ToolCallStarted(id=call_id, name=name, arguments=args, parent=parent):
                shown = clean(json.dumps(args, ensure_ascii=False))
                indent = "    " if parent else ""
                if parent:
                    self._inner.add(call_id)
                self._note(f"{indent}→ {clean(name)} {shown[:300]}"
                           f"{'…' if len(shown) > 300 else ''}")
            case ApprovalDecided(decision="denied", reason=reason):
                self._note(f"  denied{f': {clean(reason)}' if reason else ''}")
            case ToolProgress(id=call_id, progress=done, total=total, message=message):
                indent = "    " if call_id in self._inner else ""
                self._end_reply_line()
                self._progress.show(call_id, f"{indent}  … {progress_text(done, total)}"
                                             f"{f' {clean(message)}' if message else ''}")
            case TaskUpdate(id=call_id, task=task, status=status, status_message=message):
                indent = "    " if call_id in self._inner else ""
                self._end_reply_line()
                self._progress.show(call_id, f"{indent}  … {task_line(task, status, message)}")
            case ServerLog(server=server, level=level, text=text, id=None) if self.verbose:
                self._note(f"[{clean(server)}] {level}: {clean(text)}")
            case SkillUsed():
                self._note(f"  {skill_line(event)}")
            case ToolResult(id=call_id, is_error=is_error, text=text):
                self._progress.finish(call_id)
                first = first_line(text)
                indent = "      " if call_id in self._inner else "  "
                self._note(f"{indent}{'✗' if is_error else '←'} {first}")
            case Retrying(attempt=n, max_attempts=total, delay=delay, reason=reason):
                self._note(f"retry {n}/{total} in {delay:.1f} s: {reason}")
            case ErrorOccurred(message=message):
                self._note(f"error: {clean(message)}")
            case Notice(message=message):
                self._note(f"note: {clean(message)}")
            case InitDone(message=message):
                self._note(clean(message))
            case Compacted():
                self._note(f"note: {event.describe()}")
            case TurnDone():
                self._progress.close()
                self._text(self._masker.feed(self._cleaner.flush()) + self._masker.flush())
                if self._mid_line:
                    self.out.write("\n")
                    self._mid_line = False
                self.out.flush()


@dataclass
class JsonPrinter:
    """One JSON object a line, the ``--output jsonl`` contract."""

    out: IO[str]
    secrets: frozenset[str] = frozenset()
    verbose: bool = False
    """Print ``server_log`` events (``--verbose``)."""
    _masker: EventMasker = field(init=False)

    def __post_init__(self) -> None:
        self._masker = EventMasker(self.secrets)

    def show(self, event: Event) -> None:
        if isinstance(event, ServerLog) and (not self.verbose or event.id is not None):
            return  # every line comes once, from the hub, with --verbose
        for shown in self._masker(event):
            self._line(shown.to_json())

    def _line(self, payload: dict[str, Any]) -> None:
        self.out.write(mask_json(json.dumps(payload), self.secrets) + "\n")
        self.out.flush()


@dataclass
class Thought:
    """The model's thinking on ``err`` as it streams, after a ``thinking:`` label, its
    line ended once something else comes. Each piece is dimmed on its own (``dim``), so
    an interrupted run never leaves the terminal dim."""

    err: IO[str]
    secrets: frozenset[str]
    dim: bool
    _on: bool = field(default=False, init=False)
    _mid_line: bool = field(default=False, init=False)
    _masker: StreamMasker = field(init=False)
    _cleaner: StreamCleaner = field(init=False, default_factory=StreamCleaner)

    def __post_init__(self) -> None:
        self._masker = StreamMasker(self.secrets)

    def show(self, delta: str) -> None:
        self._write(self._masker.feed(self._cleaner.feed(delta)))

    def _write(self, text: str) -> None:
        if not text:
            return
        if not self._on:
            text = text.lstrip()
            if not text:
                return  # no label for empty pieces
            self._on = True
            text = "thinking: " + text
        self.err.write(f"{DIM}{text}{UNDIM}" if self.dim else text)
        self.err.flush()
        self._mid_line = not text.endswith("\n")

    def end(self) -> None:
        """The thinking so far, and its line ended."""
        self._write(self._masker.feed(self._cleaner.flush()) + self._masker.flush())
        if self._on and self._mid_line:
            self.err.write("\n")
            self.err.flush()
        self._on = self._mid_line = False


DIM, UNDIM = "\x1b[2m", "\x1b[22m"
"""SGR faint on and off."""


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-like stream
        return False


def progress_text(done: float, total: float | None) -> str:
    """``3/10 (30%)``, or ``3`` when the total is unknown."""
    if total:
        return f"{done:g}/{total:g} ({min(done / total, 1):.0%})"
    return f"{done:g}"
