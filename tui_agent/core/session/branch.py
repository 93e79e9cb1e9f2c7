"""A conversation branched before one of its user messages (``/rewind``): a new session
file holding the messages before it (with their times, how their calls ended and the
compactions among them), its ``meta`` naming the file and message it branched from, and
its ``lineage``: each session it came from, newest first, with how many of that session's
messages it holds (``/rewind`` restores the files the built-in tools changed in those
messages too: :func:`tui_agent.core.rewind.lineage`). The old file is left as it was: both
can be resumed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.session.records import Conversation, SessionError
from tui_agent.core.session.store import SessionStore
from tui_agent.core.session.writer import SessionWriter
from tui_agent.tools.text import clean

CARRIED = ("model", "cwd", "demo")
"""What of the old file's ``meta`` the branch keeps."""


@dataclass(frozen=True)
class UserPoint:
    """A user message a conversation can be rewound to: its place among the entries,
    when it was sent (None in an older file) and its words (one line, cleaned)."""

    index: int
    at: float | None
    text: str


def user_points(conv: Conversation) -> list[UserPoint]:
    """The user messages of ``conv``, in order."""
    points = []
    for index, entry in enumerate(conv.entries):
        message = entry.message
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):  # words and images: the words
            content = " ".join(str(p.get("text")) for p in content
                               if isinstance(p, dict) and p.get("type") == "text")
        text = " ".join(clean(str(content or "")).split()) or "(no words)"
        points.append(UserPoint(index, entry.at, text))
    return points


def branch(conv: Conversation, index: int, store: SessionStore,
           secrets: Iterable[str] = (), path: Path | None = None) -> Conversation:
    """A new session file in ``store`` (at ``path``, which must not exist: default a new
    one) holding ``conv``'s messages before ``index``; the conversation it holds, loaded.
    Raises ``SessionError``."""
    from tui_agent.core.session.loader import load

    if not 0 <= index <= len(conv.entries):
        raise SessionError(f"no message {index} in session {conv.id}")
    meta = {k: conv.meta[k] for k in CARRIED if k in conv.meta}
    meta["branched_from"] = {"id": conv.id, "before": index}
    # the parent's lines are tagged with its file's name, and with the id it was created
    # under if it was moved since (ACP's /rewind moves the old conversation)
    names = dict.fromkeys([conv.id, str(conv.meta.get("id") or conv.id)])
    meta["lineage"] = [*({"id": name, "before": index} for name in names),
                       *_lineage(conv, index)]
    writer = SessionWriter.create(path or store.new_path(), meta, secrets)
    try:
        markers = [m for m in conv.compactions if m.at <= index]
        for count, entry in enumerate(conv.entries[:index]):
            while markers and markers[0].at <= count:
                writer.compaction(markers.pop(0).state, {"in_turn": True})
            writer.message(entry.message, incomplete=entry.incomplete, call=entry.call,
                           at=entry.at, sync=False)
        for marker in markers:
            writer.compaction(marker.state, {"in_turn": True})
        writer.keep()
        writer.sync()
    finally:
        writer.close()
    return load(writer.path, secrets)


def _lineage(conv: Conversation, index: int) -> list[dict[str, object]]:
    """``conv``'s own lineage, each step cut to the ``index`` messages a branch takes."""
    steps = conv.meta.get("lineage")
    return [{"id": step["id"], "before": min(step["before"], index)}
            for step in steps if isinstance(step, dict) and isinstance(step.get("id"), str)
            and isinstance(step.get("before"), int)] if isinstance(steps, list) else []
