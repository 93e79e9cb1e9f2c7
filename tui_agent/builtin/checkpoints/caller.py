"""Which conversation a built-in tool's call comes from, so the store tags each change
with it (C2 of the review: one store per folder is shared by every conversation run
there, and ``/rewind`` must put back its own conversation's changes alone).

The client says it in the call's ``_meta`` under :data:`KEY`: ``{"session": id, "turn":
n}``, the session's id and how many of its messages came before the call (the hub puts
it there, from :func:`tui_agent.core.rewind.call_meta`). :func:`tag_calls` makes the
server put it in :data:`CALLER` for the length of each call; the store reads it there
when it journals a change, and notes which store the session's changes went to
(:func:`note_store`), so a conversation resumed from another folder finds them. A client
that says nothing gets untagged lines, restored by time as before."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.config.private import PRIVATE_FILE, private_dir

KEY = "io.tui-agent/checkpoint"
"""The key of the call's ``_meta`` that names the conversation."""


@dataclass(frozen=True)
class Caller:
    """The conversation a call comes from: its session id and its count of messages
    before the call."""

    session: str
    turn: int


CALLER: ContextVar[Caller | None] = ContextVar("tui_agent_checkpoint_caller", default=None)


def caller_of(meta: Mapping[str, Any] | None) -> Caller | None:
    """The caller a call's ``_meta`` names, or None (not said, or not well formed)."""
    said = meta.get(KEY) if isinstance(meta, Mapping) else None
    if not isinstance(said, Mapping):
        return None
    session, turn = said.get("session"), said.get("turn")
    if (not isinstance(session, str) or not safe_id(session) or not isinstance(turn, int)
            or isinstance(turn, bool) or turn < 0):
        return None
    return Caller(session, turn)


def safe_id(session: str) -> bool:
    """A session id as tui-agent makes them (it names a file: nothing else is taken)."""
    return 0 < len(session) <= 100 and all(c.isalnum() or c in "-_" for c in session)


def tag_calls(server: Any) -> None:
    """Make ``server`` (an ``MCPServer``) set :data:`CALLER` from each tool call's
    ``_meta`` while the call runs."""
    original = server.call_tool

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        meta = None
        with contextlib.suppress(ValueError, AttributeError):  # a call from no request
            meta = context.request_context.meta if context is not None else None
        token = CALLER.set(caller_of(meta))
        try:
            return await original(name, arguments, context)
        finally:
            CALLER.reset(token)

    server.call_tool = call_tool


def sessions_dir(checkpoints: Path) -> Path:
    """Where the stores each session's changes went to are noted (``<id>.txt``)."""
    return checkpoints / "sessions"


_NOTED: set[tuple[str, str]] = set()


def note_store(session: str, store: Path) -> None:
    """Note that ``session``'s changes are kept in ``store`` (once a process). Raises
    OSError."""
    if (session, str(store)) in _NOTED or not safe_id(session):
        return
    path = sessions_dir(store.parent) / f"{session}.txt"
    if store.name not in stores_noted(path):
        private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
        try:
            os.write(fd, store.name.encode("utf-8", "surrogateescape") + b"\n")
        finally:
            os.close(fd)
    _NOTED.add((session, str(store)))


def stores_noted(path: Path) -> list[str]:
    """The store names noted in ``path`` (none when it is not there)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [n for n in text.splitlines() if n and "/" not in n and n not in (".", "..")]


def stores_of(checkpoints: Path, session: str) -> list[Path]:
    """The stores ``session``'s changes were noted in."""
    if not safe_id(session):
        return []
    return [checkpoints / name
            for name in stores_noted(sessions_dir(checkpoints) / f"{session}.txt")]
