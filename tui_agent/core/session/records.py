"""What a session file holds, as loaded: the conversation, its entries and compactions,
and the rule both the writer and the loader read a line by (:func:`record_of`)."""

from __future__ import annotations

import json
import secrets as _secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.core.events import Usage
from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from tui_agent.core.session.calls import SavedCall

FORMAT_VERSION = 1


def record_of(line: bytes) -> dict[str, Any] | None:
    """The record a line of a session file holds, or None when it holds none (torn by a
    crash, or corrupt). A line lacking only its newline holds its record: the loader reads
    it, and the writer ends that line before it appends the next."""
    try:
        record = json.loads(line)
    except ValueError:  # UnicodeDecodeError too
        return None
    return record if isinstance(record, dict) and "kind" in record else None


class SessionError(Exception):
    """A session cannot be found, opened or written; the message says which and why."""


@dataclass
class Entry:
    """One message of a loaded conversation."""

    message: dict[str, Any]
    incomplete: bool = False
    call: SavedCall | None = None
    """For a tool result: how its call ended, as its card showed it (None in a file
    written before tui-agent kept that)."""
    at: float | None = None
    """When it was written (``time.time()``; None in a file without it): ``/rewind``
    finds the files' checkpoints since a user message by it."""


@dataclass(frozen=True)
class Compaction:
    """What the model reads of a long conversation: ``summary`` in place of its first
    ``replaces`` messages (counted as the file holds them), and a stub in place of the
    results of the tool calls in ``stubbed``."""

    summary: str | None = None
    replaces: int = 0
    stubbed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Marker:
    """A compaction as the file recorded it: ``at`` messages came before it."""

    at: int
    state: Compaction
    reason: str = ""
    replaced: int = 0
    """Messages it newly summarized (0: it only read tool results as stubs)."""


@dataclass
class Conversation:
    """What a session file holds, as loaded."""

    id: str
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    skipped_lines: int = 0
    compaction: Compaction | None = None
    """The last compaction recorded, if any."""
    compactions: list[Marker] = field(default_factory=list)
    """Every compaction, in order, with where it happened."""
    next_seq: int = 0
    """The sequence number a resumed writer continues from: past every seq on disk,
    so a skipped line can never make a new message overwrite an old one."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [e.message for e in self.entries]

    @property
    def calls(self) -> dict[str, SavedCall]:
        """How each call the model made ended, by call id, where the file says."""
        return {str(e.message.get("tool_call_id")): e.call for e in self.entries
                if e.call is not None and e.message.get("role") == "tool"}

    @property
    def demo(self) -> bool:
        """A conversation with the offline demo's scripted model."""
        return self.meta.get("demo") is True

    def title(self, width: int = 60) -> str:
        """The first words the user sent (``(demo)`` first for a demo conversation)."""
        mark = "(demo) " if self.demo else ""
        return mark + (first_words(self.messages, width - len(mark)) or "(empty)")


SESSION_START_CONTEXT = "Context from a SessionStart hook:"
PROMPT_CONTEXT = "Context from a UserPromptSubmit hook:"
SUBAGENT_START_CONTEXT = "Context from a SubagentStart hook:"
STOP_NOTE = "A Stop hook asks you to go on before ending your turn:"
NOT_TYPED = (SESSION_START_CONTEXT, PROMPT_CONTEXT, SUBAGENT_START_CONTEXT, STOP_NOTE)
"""How the user-role messages that tui-agent writes itself (hooks' words for the model)
begin: none of them is what the person typed, so none is a conversation's title."""


def first_words(messages: Iterable[dict[str, Any]], width: int = 60) -> str | None:
    """The first words the user sent, on one line, cut to ``width`` (None: nothing yet):
    a conversation's title, as ``tui-agent sessions`` and an editor's list show it. The
    hooks' words for the model (:data:`NOT_TYPED`) are not the user's."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):  # words and images: the words
            content = next((p.get("text") for p in content if isinstance(p, dict)), None)
        if isinstance(content, str) and content.startswith(NOT_TYPED):
            continue
        if message.get("role") == "user" and isinstance(content, str):
            text = " ".join(clean(content).split())
            return text if len(text) <= width else text[: width - 1] + "…"
    return None


def new_id() -> str:
    """Sortable by time, unique enough across processes: ``20261122-014500-3fa2c1``."""
    return f"{datetime.now():%Y%m%d-%H%M%S}-{_secrets.token_hex(3)}"
