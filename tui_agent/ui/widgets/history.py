"""What the transcript needs to lay out a saved conversation: how many of its last
messages fill the screen (estimated from their Markdown), where a page may start, and a
saved message's text, call arguments and whether a result reads as a failure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui_agent.tools.wording import counted

if TYPE_CHECKING:
    from tui_agent.core.events import Compacted, ContextSize
    from tui_agent.core.session import Marker

MARKER = "tui-agent/compacted"
"""The role of the entry a resumed conversation's list gets where it was compacted."""
PAGE = 12
"""The most messages of a resumed conversation mounted at once (a Markdown reply costs
~20 ms to mount). The first page is only what fills the screen; scrolling to the top,
or the "show earlier" button, brings the next."""


def first_shown(messages: Sequence[dict[str, Any]], rows: int, width: int) -> int:
    """The index from which the last messages fill about ``rows`` rows of ``width``
    columns (at most :data:`PAGE` of them), estimated from their Markdown."""
    used, start = 0, len(messages)
    while start > 0 and used < rows and len(messages) - start < PAGE:
        start -= 1
        message = messages[start]
        used += _rows(text_of(message.get("content")), width) + 1
        used += 3 * len(message.get("tool_calls") or [])
    return start


_OWN_LINE = re.compile(r"^\s*([-*+]\s|\d+[.)]\s|#|>|\|)")


def _rows(text: str, width: int) -> int:
    """Rows ``text`` takes as Markdown: a code fence's lines one each (its fences are its
    frame), a list item, quote or table row one each, a heading two, the lines of a
    paragraph joined (a single newline is a space) and wrapped at ``width``, and a row
    between blocks."""
    rows, paragraph, fenced, block = 0, 0, False, False

    def flush() -> int:
        nonlocal paragraph
        taken, paragraph = (paragraph + width - 1) // width, 0
        return taken

    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced, block = not fenced, True
            rows += flush() + 1
        elif fenced:
            rows += 1
        elif not line.strip():
            rows += flush() + (1 if block else 0)
            block = False
        elif _OWN_LINE.match(line):
            rows += flush() + (2 if line.lstrip().startswith("#") else 1) + len(line) // width
            block = True
        else:
            paragraph += len(line) + 1
            block = True
    return rows + flush()


def tokens_text(tokens: int) -> str:
    """``812``, ``4.1k``, ``41k``, ``1.2M``."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 10_000:
        return f"{tokens / 1000:.1f}k"
    if tokens < 1_000_000:
        return f"{tokens // 1000}k"
    return f"{tokens / 1_000_000:.1f}M"


def context_report(size: ContextSize, tools: int, messages: int, summarized: int,
                   prompt: Sequence[tuple[str, int]] = ()) -> str:
    """``/context``: the next request, part by part (``prompt``: the system prompt's
    parts with their tokens, shown under it)."""
    def share(n: int) -> str:
        return f" ({n / size.window:.0%})" if size.window else ""

    window = f" of {size.window:,}{share(size.tokens)}" if size.window else \
        " (the model's window is unknown: set [model] context_window)"
    at = f"; older messages are summarized past {size.compact_at:,}" if size.compact_at else ""
    rows = [("system prompt and server instructions", size.system, ""),
            ("tool definitions", size.tools, counted(tools, "tool")),
            ("summary", size.summary, f"of {counted(summarized, 'earlier message')}"),
            ("messages", size.messages, ""),
            ("tool results", size.results, "")]
    lines = [f"context: {size.tokens:,} tokens{window}{at}"]
    for name, n, note in rows:
        if n or name != "summary":
            lines.append(f"  {name:<38} {n:>8,}{share(n)}{f'  {note}' if note else ''}")
        if name.startswith("system prompt"):
            lines += [f"    {part:<36} {tokens:>8,}" for part, tokens in prompt]
    lines.append(f"  {counted(messages, 'message')} read verbatim; counted with the model's "
                 "tokenizer, corrected by the provider's last report")
    return "\n".join(lines)


def marker_text(event: Compacted) -> str:
    """What the "compacted here" line says of a compaction that just happened."""
    return (f"{event.done()} ({tokens_text(event.tokens_before)} → "
            f"{tokens_text(event.tokens_after)} tokens); every message stays here and on "
            "disk")


def with_markers(messages: Sequence[dict[str, Any]], markers: Sequence[Marker]
                 ) -> list[dict[str, Any]]:
    """A saved conversation with an entry (role :data:`MARKER`) where each compaction
    happened."""
    at: dict[int, list[str]] = {}
    for marker in markers:
        said = f"{marker.replaced} earlier messages summarized for the model" \
            if marker.replaced else "large tool results read as a stub"
        at.setdefault(marker.at, []).append(f"{said}; every message stays here and on disk")
    out: list[dict[str, Any]] = []
    for index in range(len(messages) + 1):
        out += [{"role": MARKER, "content": text} for text in at.get(index, ())]
        if index < len(messages):
            out.append(messages[index])
    return out


def page_start(messages: Sequence[dict[str, Any]], start: int) -> int:
    """Never start a page on a tool result: it belongs with the call before it."""
    start = max(start, 0)
    while 0 < start < len(messages) and messages[start].get("role") == "tool":
        start -= 1
    return start


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def arguments(raw: Any) -> dict[str, Any]:
    import json

    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {"(unparsed)": raw}
    return value if isinstance(value, dict) else {}


def looks_failed(text: str) -> bool:
    return text.startswith(("error:", "The user denied", "not run:"))
