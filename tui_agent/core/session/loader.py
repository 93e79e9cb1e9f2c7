"""Reading a session file back (:func:`load`): every record it can read, the reply a
crash cut short rebuilt from its partial records, every secret masked again."""

from __future__ import annotations

import bisect
import contextlib
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_agent.config.interpolate import mask
from tui_agent.core.events import Usage, masked
from tui_agent.core.session.calls import SavedAgent, SavedCall
from tui_agent.core.session.records import (
    Compaction,
    Conversation,
    Entry,
    Marker,
    SessionError,
    record_of,
)


def known_secrets(secrets: Iterable[str] = ()) -> frozenset[str]:
    """``secrets`` and the environment's keys (``OPENAI_API_KEY``, ...): what a reader of
    saved conversations masks again (OAuth tokens learned so far are masked too)."""
    from tui_agent.config.loader import environment_keys

    return frozenset(secrets) | environment_keys(os.environ)


def load(path: Path, secrets: Iterable[str] = ()) -> Conversation:
    """Read a session file. Torn or corrupt lines are skipped and counted, never fatal.

    Masked again with :func:`known_secrets` of ``secrets``: a secret the file holds whole
    (one it was written before it was known, or one that an older writer left split
    across ``partial`` records, joined here) is never shown or sent again."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SessionError(f"no session file at {path}") from None
    except OSError as exc:
        raise SessionError(f"cannot read session {path}: {exc}") from None
    conv = Conversation(id=path.stem, path=path)
    hidden = known_secrets(secrets)
    partials: dict[int, list[str]] = {}
    messages: dict[int, Entry] = {}
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        record = record_of(line)
        if record is None:
            conv.skipped_lines += 1
            continue
        kind = record["kind"]
        seq = record.get("seq")
        if kind == "meta":
            conv.meta = record
        elif kind == "message" and isinstance(record.get("message"), dict):
            key = seq if isinstance(seq, int) else conv.next_seq
            messages[key] = Entry(masked(record["message"], hidden),
                                  bool(record.get("incomplete")),
                                  SavedCall.of(masked(record.get("call"), hidden)),
                                  _time(record.get("at")))
            conv.next_seq = max(conv.next_seq, key + 1)
        elif kind == "partial" and isinstance(seq, int):
            partials.setdefault(seq, []).append(str(record.get("delta")))
            conv.next_seq = max(conv.next_seq, seq + 1)
        elif kind == "turn" or kind == "compaction" and record.get("in_turn") is False:
            with contextlib.suppress(TypeError):  # a compaction outside a turn bills itself
                conv.usage = conv.usage + Usage(**record.get("usage", {}))
        state = _compaction(masked(record, hidden)) if kind == "compaction" else None
        if state is not None:
            conv.compaction = state
            replaced = record.get("replaced")
            conv.compactions.append(Marker(seq if isinstance(seq, int) else conv.next_seq,
                                           state, str(record.get("reason", "")),
                                           replaced if isinstance(replaced, int) else 0))
    for seq, pieces in partials.items():
        if seq not in messages:
            messages[seq] = Entry({"role": "assistant",
                                   "content": mask("".join(pieces), hidden)}, incomplete=True)
    order = sorted(messages)
    conv.entries = [messages[k] for k in order]
    # where each compaction happened, as a count of the messages before it
    conv.compactions = [replace(m, at=bisect.bisect_left(order, m.at))
                        for m in conv.compactions]
    return conv


def _compaction(record: dict[str, Any]) -> Compaction | None:
    summary, replaces, stubbed = (record.get(k) for k in ("summary", "replaces", "stubbed"))
    if not isinstance(replaces, int) or replaces < 0 or not isinstance(stubbed, list) or not (
            summary is None or isinstance(summary, str)):
        return None  # a record we cannot read: the one before it stands
    return Compaction(summary, replaces, tuple(str(s) for s in stubbed))


def _time(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def agent_transcript(parent_path: Path, saved: SavedAgent,
                     secrets: Iterable[str] = ()) -> Conversation | None:
    """The transcript of a sub-agent the parent's session file at ``parent_path`` saved
    (``saved.file``, beside it); None when there is none, it is missing or unreadable, or
    its path leads out of the parent's folder."""
    if not saved.file:
        return None
    folder = parent_path.parent
    path = folder / saved.file
    try:
        if not path.resolve().is_relative_to(folder.resolve()):
            return None
        return load(path, secrets)
    except (OSError, SessionError, ValueError):
        return None
