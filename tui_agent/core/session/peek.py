"""A glance at a session file for a list (:func:`peek`): its header and its title, read
from the first lines only, however long the conversation is. An editor lists sessions each
time it opens its history: reading and masking every whole file for that grows with the
store, and the title is in the first prompt."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.events import masked
from tui_agent.core.session.loader import known_secrets
from tui_agent.core.session.records import first_words, record_of

MAX_LINES = 200
"""Records looked at for the first prompt at most (a conversation that starts with many
messages that are not the person's is titled ``(empty)`` past them)."""


@dataclass(frozen=True)
class Glance:
    """What a list shows of one session file."""

    meta: dict[str, Any]
    said: bool
    """Anything beyond its header (a message, or a piece of one a crash cut short)."""
    title: str
    """The first words the person sent (masked), or ``(empty)``; ``(demo)`` first for
    the demo's conversations, as :meth:`~.records.Conversation.title` gives it."""


def peek(path: Path, secrets: Iterable[str] = (), width: int = 60) -> Glance:
    """The header and title of the session file at ``path``, reading no further than its
    first prompt. Raises ``OSError`` for a file that cannot be read."""
    hidden = known_secrets(secrets)
    meta: dict[str, Any] = {}
    said = False
    title: str | None = None
    with path.open("rb") as file:
        for number, line in enumerate(file):
            if number > MAX_LINES:
                break
            record = record_of(line) if line.strip() else None
            if record is None:
                continue
            kind = record["kind"]
            if kind == "meta" and not meta:
                meta = record
            elif kind in ("message", "partial"):
                said = True
                message = record.get("message")
                if kind == "message" and isinstance(message, dict):
                    title = first_words([masked(message, hidden)], width)
                    if title is not None:
                        break
    mark = "(demo) " if meta.get("demo") is True else ""
    return Glance(meta, said, mark + (title or "(empty)"))
