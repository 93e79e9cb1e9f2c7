"""The saved conversations as ACP lists and deletes them: ``session/list`` (newest first,
filtered by ``cwd``, in pages behind an opaque cursor) and ``session/delete``.

The list is the store ``tui-agent sessions`` reads (the same ids, the same titles); a
conversation that recorded no folder (an older file) or the demo's is left out, since ACP
needs a ``cwd`` for each and the demo is no conversation of the user's. Deleting moves the
file into the store's ``deleted/`` folder: gone from every list (``session/list``,
``tui-agent sessions``, ``--resume``), still there for a person who wants it back.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import SessionInfo

from tui_agent.core.session.peek import peek
from tui_agent.core.session.store import SessionStore

PAGE = 50
"""Sessions in one page of ``session/list``."""
DELETED = "deleted"
"""The store's folder that deleted sessions are moved to."""


def iso(timestamp: float) -> str:
    """An ISO 8601 time in UTC, as ``updatedAt`` is given."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


def _cursor(key: tuple[float, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


def _after(cursor: str | None) -> tuple[float, str] | None:
    """The (time, id) a page starts below; a cursor this agent did not give is refused."""
    if cursor is None:
        return None
    try:
        when, name = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(when), str(name)
    except (ValueError, TypeError):
        raise RequestError.invalid_params({"cursor": cursor, "message": "not a cursor this "
                                           "agent gave (pass nextCursor as it came)"}) from None


def page(store: SessionStore, secrets: frozenset[str], cwd: str | None,
         cursor: str | None, size: int = PAGE) -> tuple[list[SessionInfo], str | None]:
    """One page of the saved sessions, newest first, and the cursor of the next (None at
    the end). Reads files: call it in a thread."""
    if cwd is not None and not Path(cwd).is_absolute():
        raise RequestError.invalid_params({"cwd": cwd, "message": "cwd must be absolute"})
    start = _after(cursor)
    keyed = []
    for path in store.paths():
        with contextlib.suppress(OSError):  # gone since listed
            keyed.append(((path.stat().st_mtime, path.stem), path))
    keyed.sort(reverse=True)
    found: list[SessionInfo] = []
    last = (0.0, "")
    for key, path in keyed:
        if start is not None and key >= start:
            continue
        info = _info(path, key[0], secrets)
        if info is None or (cwd is not None and not _same(info.cwd, cwd)):
            continue
        if len(found) == size:
            return found, _cursor(last)
        found.append(info)
        last = key
    return found, None


def _same(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def _info(path: Path, mtime: float, secrets: frozenset[str]) -> SessionInfo | None:
    """The session as listed, read from its first lines only (:func:`peek`)."""
    try:
        glance = peek(path, secrets)
    except OSError:
        return None
    cwd = glance.meta.get("cwd")
    if not glance.said or glance.meta.get("demo") is True or not isinstance(cwd, str) \
            or not cwd:
        return None
    return SessionInfo(session_id=path.stem, cwd=cwd, title=glance.title,
                       updated_at=iso(mtime))


def find(store: SessionStore, session_id: str) -> Path | None:
    """The file of the session of exactly this id (never a prefix or a path: an editor
    names a session it was given)."""
    return next((p for p in store.paths() if p.stem == session_id), None)


def delete(store: SessionStore, session_id: str) -> None:
    """Move the session's file to ``deleted/``; nothing for an id the store does not hold.
    A session another process holds open is refused (its file is in use there)."""
    path = find(store, session_id)
    if path is None:
        return
    try:  # never created: a file gone since it was found stays gone
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND), "ab") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RequestError.invalid_params({
                    "sessionId": session_id, "message": f"session {session_id} is open in "
                    "another tui-agent process: close it there first"}) from None
            target = store.directory / DELETED
            target.mkdir(mode=0o700, exist_ok=True)
            os.replace(path, target / path.name)  # under the lock: nobody opens it between
    except FileNotFoundError:  # deleted by someone else meanwhile: as asked
        return


def session_info(conv_title: str, mtime: float | None = None) -> Any:
    """The ``session_info_update`` of a title (and when the session was last written)."""
    from acp.schema import SessionInfoUpdate

    return SessionInfoUpdate(session_update="session_info_update", title=conv_title,
                             updated_at=iso(mtime) if mtime is not None else None)
