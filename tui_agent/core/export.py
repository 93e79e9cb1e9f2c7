"""A conversation as Markdown: what ``tui-agent export`` writes."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tui_agent.config.interpolate import mask
from tui_agent.config.private import write_text
from tui_agent.core.permissions.modes import without_mode_note
from tui_agent.core.session import Conversation, Marker, known_secrets
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

RESULT_PREVIEW = 4000


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks inside ``text``."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _block(text: str, lang: str = "") -> str:
    fence = _fence(text)
    return f"{fence}{lang}\n{text}\n{fence}"


def _tool_call(call: dict[str, Any]) -> str:
    fn = call.get("function") or {}
    raw = fn.get("arguments") or "{}"
    try:
        args = json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    except ValueError:
        args = raw
    return f"**Tool call** `{clean(str(fn.get('name')))}`\n\n" + _block(clean(args), "json")


def save(target: Path, text: str) -> None:
    """Write an export to ``target``. It holds the conversation (tool results, attached
    files): a new file is created private (0600), as the session file is; an existing one
    keeps its mode. Raises OSError."""
    write_text(target, text)


def to_markdown(conv: Conversation, secrets: Iterable[str] = ()) -> str:
    """``conv`` as Markdown, masked again with ``secrets`` (and the environment's keys)."""
    return mask(_markdown(conv), known_secrets(secrets))


def _markdown(conv: Conversation) -> str:
    meta = conv.meta
    lines = [f"# Conversation {conv.id}", ""]
    facts = [f"created {meta['created']}" if meta.get("created") else "",
             f"model `{meta['model']}`" if meta.get("model") else ""]
    if any(facts):
        lines += [" · ".join(f for f in facts if f), ""]
    markers = {m.at: m for m in conv.compactions}
    for index, entry in enumerate([*conv.entries, None]):
        if index in markers:
            lines += _marker(markers[index])
        if entry is None:
            break
        msg = entry.message
        role = msg.get("role")
        content = msg.get("content")
        if isinstance(content, list):  # words and images: the words (the images are named)
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        text = clean(content) if isinstance(content, str) else ""
        if role == "user":
            lines += ["## You", "", without_mode_note(text), ""]
        elif role == "assistant":
            lines += ["## Assistant", ""]
            if text:
                lines += [text, ""]
            for call in msg.get("tool_calls") or []:
                lines += [_tool_call(call), ""]
            if entry.incomplete:
                lines += ["*(this reply is incomplete: it was cut off)*", ""]
        elif role == "tool":
            shown = text if len(text) <= RESULT_PREVIEW else \
                text[:RESULT_PREVIEW] + f"\n… ({len(text) - RESULT_PREVIEW} more characters)"
            lines += ["<details><summary>Tool result</summary>", "", _block(shown), "",
                      "</details>", ""]
        elif role == "system":
            lines += ["## System", "", text, ""]
    return "\n".join(lines).rstrip() + "\n"


def _marker(marker: Marker) -> list[str]:
    """Where the model's view was compacted, and what it read from then on."""
    said = [f"{counted(marker.replaced, 'earlier message')} as the summary below"] \
        if marker.replaced else []
    if marker.state.stubbed and not marker.replaced:
        said.append("its largest tool results as a stub naming the file that keeps them")
    lines = ["---", "", f"*compacted here ({clean(marker.reason) or 'compaction'}): from "
             f"here on the model read {' and '.join(said) or 'a shorter conversation'}*", ""]
    if marker.replaced and marker.state.summary:
        lines += [f"> {row}" if row else ">" for row in clean(marker.state.summary)
                  .splitlines()] + [""]
    return [*lines, "---", ""]
