"""The journal half of the store: one JSON line per change, appended and fsynced
(``{"seq", "at", "path", "blob"}``; ``blob`` null with ``"absent": true`` for a file that
did not exist, with ``"skipped"`` for one not kept and why; ``"session"`` and ``"turn"``: the
conversation whose tool call made the change and how many of its messages came before
that call, so ``/rewind`` restores that conversation's changes alone and exactly since a
message. A journal written before those were kept has lines without them).

Crash-safe as the session files are: a line is written whole in one ``write`` and
fsynced; a line a kill cut short is skipped when read and cut before the next append;
dropping the oldest lines writes the rest to a new file, fsynced, renamed over the old
one (so a reader sees the old journal or the new, never a mix). Every change to the
journal and its blobs happens under an ``flock`` on the store's ``lock`` file, so the
server (keeping) and the app (restoring) can share a store."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.config.private import PRIVATE_FILE, private_dir


@dataclass(frozen=True)
class Line:
    """One change the journal recorded: ``path``'s content before it (``blob``), or
    ``absent`` (there was no file), or ``skipped`` (not kept, and why)."""

    seq: int
    at: float
    path: str
    blob: str | None = None
    absent: bool = False
    skipped: str = ""
    session: str = ""
    """The conversation whose tool call made the change ("": not said, an older line or a
    client that does not say)."""
    turn: int = -1
    """How many of that conversation's messages came before the call (-1: not said)."""

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "at": self.at, "path": self.path,
                               "blob": self.blob}
        if self.absent:
            out["absent"] = True
        if self.skipped:
            out["skipped"] = self.skipped
        if self.session:
            out["session"], out["turn"] = self.session, self.turn
        return out


def line_of(raw: bytes) -> Line | None:
    """The change a journal line holds, or None (torn by a kill, or not ours)."""
    try:
        record = json.loads(raw)
        seq, at, path, blob = (record[k] for k in ("seq", "at", "path", "blob"))
    except (ValueError, TypeError, KeyError):
        return None
    if (not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(at, int | float)
            or not isinstance(path, str) or not (blob is None or isinstance(blob, str))):
        return None
    skipped, session, turn = (record.get(k) for k in ("skipped", "session", "turn"))
    tagged = isinstance(session, str) and isinstance(turn, int) and not isinstance(turn, bool)
    return Line(seq, float(at), path, blob, record.get("absent") is True,
                skipped if isinstance(skipped, str) else "",
                session if tagged else "", turn if tagged else -1)


def read(path: Path) -> list[Line]:
    """Every line the journal at ``path`` holds that can be read, in order (none when it
    is not there)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    return [line for chunk in raw.split(b"\n") if chunk.strip()
            and (line := line_of(chunk)) is not None]


def append(path: Path, line: Line) -> None:
    """Append ``line``, on disk when this returns. A last line a kill left without its
    newline is ended (if whole) or cut first. Raises OSError."""
    private_dir(path.parent)
    # read and write: a torn last line is read before the next is appended
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    try:
        _end_torn_tail(fd)
        data = json.dumps(line.record(), ensure_ascii=False, separators=(",", ":"))
        os.write(fd, data.encode("utf-8") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def rewrite(path: Path, lines: Iterable[Line]) -> None:
    """Replace the journal with ``lines`` at once (a new file renamed over it)."""
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as out:
            for line in lines:
                out.write(json.dumps(line.record(), ensure_ascii=False,
                                     separators=(",", ":")).encode("utf-8") + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    fsync_dir(path.parent)


def _end_torn_tail(fd: int) -> None:
    end = os.fstat(fd).st_size
    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
        return
    # journal lines are short: the last one starts within the last 64 KiB
    start = max(0, end - 65536)
    chunk = os.pread(fd, end - start, start)
    cut = chunk.rfind(b"\n")
    keep = start + cut + 1 if cut >= 0 else 0
    if line_of(os.pread(fd, end - keep, keep)) is not None:
        os.write(fd, b"\n")
    else:
        os.ftruncate(fd, keep)
    os.fsync(fd)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
