"""Writing a session file: :class:`SessionWriter` appends records to the one file this
process holds a lock on (see :mod:`tui_agent.core.session` for the records)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from tui_agent.config.interpolate import StreamMasker, mask, mask_json
from tui_agent.config.private import open_append, private_dir, write_text
from tui_agent.core.events import Usage
from tui_agent.core.session.calls import SavedCall
from tui_agent.core.session.records import (
    FORMAT_VERSION,
    Compaction,
    Conversation,
    SessionError,
    record_of,
)

PARTIAL_FLUSH_SECONDS = 0.25
# Conversations, tool results and attached files are the user's alone: created 0600, in
# directories (sessions, results) made 0700 (tui_agent.config.private).


class SessionWriter:
    """Appends records to one session file that this process holds a lock on."""

    def __init__(self, path: Path, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self.id = path.stem
        self._secrets = frozenset(secrets)
        self._seq = 0
        self._pending: list[str] = []
        self._held = ""
        """Streamed text that could begin a secret: written with the next flush, masked
        with what follows it (a key streamed in pieces never lands split in the file)."""
        self._last_flush = 0.0
        self._blank = False
        """A new file that holds its ``meta`` record and nothing else yet: removed when
        closed so (a conversation nobody said anything in is not one to list or resume)."""
        created = not path.exists()
        # held for the session; created private (or made private: an older tui-agent's)
        self._file: IO[bytes] = os.fdopen(open_append(path), "ab")
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.close()
            raise SessionError(f"session {self.id} is open in another tui-agent process "
                               f"({path})") from None
        try:
            if created:
                _fsync_dir(path.parent)
            else:
                _end_torn_tail(path, self._file.fileno())
        except BaseException:
            self._abandon(created)
            raise

    def _abandon(self, created: bool) -> None:
        """Close the file of a writer that failed to start (at the open-file limit the
        directory's fsync cannot open it), removing it if this writer created it: a file
        nothing was written to is no conversation to list."""
        if created:
            with contextlib.suppress(OSError):
                self.path.unlink()
        self._file.close()

    @classmethod
    def create(cls, path: Path, meta: dict[str, Any],
               secrets: Iterable[str] = ()) -> SessionWriter:
        """Start a new session file at ``path`` (``SessionStore.new_path()`` picks one)."""
        writer = cls(path, secrets)
        try:
            writer._write({"kind": "meta", "version": FORMAT_VERSION, "id": writer.id,
                           "created": datetime.now().astimezone().isoformat(
                               timespec="seconds"), **meta}, sync=True)
        except BaseException:
            writer._abandon(True)
            raise
        writer._blank = True
        return writer

    @classmethod
    def resume(cls, conversation: Conversation, secrets: Iterable[str] = ()) -> SessionWriter:
        writer = cls(conversation.path, secrets)
        writer._seq = conversation.next_seq  # a file that was there before stays, said in or not
        return writer

    @property
    def blank(self) -> bool:
        """A file this writer created holds its ``meta`` record alone: nothing was said in
        it yet. Such a file is removed when closed, and nothing is kept beside it."""
        return self._blank

    def keep(self) -> None:
        """Keep the file when closed even if nothing was said (it is about to be opened
        again, by the same process)."""
        self._blank = False

    def next_seq(self) -> int:
        return self._seq

    @property
    def secrets(self) -> frozenset[str]:
        """The values masked in everything written (OAuth tokens learned are, too)."""
        return self._secrets

    def mask_also(self, secrets: Iterable[str]) -> None:
        """Mask these values too from now on (a reloaded config brought new ones)."""
        self._secrets = self._secrets | frozenset(secrets)

    def message(self, message: dict[str, Any], *, incomplete: bool = False,
                usage: Usage | None = None, sync: bool = True,
                call: SavedCall | None = None, at: float | None = None) -> None:
        """Record a finished message; with ``sync`` it is on disk when this returns.
        ``call``: for a tool result, how its call ended (:mod:`.calls`); ``at``: when it
        was first written (a branch copies its messages with their times)."""
        record: dict[str, Any] = {"kind": "message", "seq": self._seq,
                                  "at": round(time.time() if at is None else at, 3),
                                  "message": message}
        if incomplete:
            record["incomplete"] = True
        if usage is not None:
            record["usage"] = asdict(usage)
        if call is not None:
            record["call"] = call.record()
        self._pending.clear()
        self._held = ""
        self._write(record, sync=sync)
        self._seq += 1

    def partial(self, delta: str) -> None:
        """Note streamed text of the reply in flight; written at most every 0.25 s."""
        self._pending.append(delta)
        now = time.monotonic()
        if now - self._last_flush >= PARTIAL_FLUSH_SECONDS:
            self.flush_partial(now)

    def flush_partial(self, now: float | None = None, *, final: bool = False) -> None:
        """Write the streamed text noted since the last flush, masked; a tail that could
        begin a secret waits for the next flush (``final``: written now, the reply ends)."""
        if self._pending or (final and self._held):
            stream = StreamMasker(self._secrets)
            text = stream.feed(self._held + "".join(self._pending))
            self._held = stream.flush()
            if final:
                text, self._held = text + self._held, ""
            if text:
                self._write({"kind": "partial", "seq": self._seq, "delta": text}, sync=False)
            self._pending.clear()
        self._last_flush = time.monotonic() if now is None else now

    def save_result(self, call_id: str, text: str, *, keep: bool = False) -> Path:
        """Keep a tool's whole result beside the session (``<id>.results/<call>.txt``),
        masked like the session itself; the model gets a cut version. ``keep``: a file
        already there (the whole of a result the model read cut) is left as it is."""
        directory = self.path.with_suffix(".results")
        private_dir(directory)
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)[:100] or "call"
        target = directory / f"{safe}.txt"
        if not (keep and target.exists()):
            write_text(target, mask(text, self._secrets))
        return target

    def compaction(self, state: Compaction, facts: dict[str, Any]) -> None:
        """Record a compaction (``facts``: its figures, usage and reason); on disk when this
        returns."""
        self._write({"kind": "compaction", "seq": self._seq, "summary": state.summary,
                     "replaces": state.replaces, "stubbed": list(state.stubbed), **facts},
                    sync=True)

    def turn_end(self, reason: str, usage: Usage) -> None:
        self._write({"kind": "turn", "reason": reason, "usage": asdict(usage)}, sync=True)

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            with contextlib.suppress(OSError):
                self.flush_partial(final=True)
            with contextlib.suppress(OSError):
                self.sync()
            if self._blank:  # removed while still locked: nobody opens it in between
                with contextlib.suppress(OSError):
                    self.path.unlink()
                    _fsync_dir(self.path.parent)
            self._file.close()

    def _write(self, record: dict[str, Any], *, sync: bool) -> None:
        self._blank = False
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        line = mask_json(line, self._secrets)
        self._file.write(line.encode("utf-8") + b"\n")
        self._file.flush()
        if sync:
            os.fsync(self._file.fileno())


def _end_torn_tail(path: Path, fd: int) -> None:
    """Before anything is appended (``fd``, the locked append handle), see to a last line
    that lacks its newline: otherwise the next record would continue it, on the same line,
    and be lost with it on the next load. A whole record (:func:`record_of`: what the loader
    reads) gets its newline; anything else is what a crash cut short, and is cut."""
    with open(path, "rb") as reader:
        end = os.fstat(reader.fileno()).st_size
        if end == 0 or os.pread(reader.fileno(), 1, end - 1) == b"\n":
            return
        keep, at = 0, end
        while at > 0:
            start = max(0, at - 65536)
            chunk = os.pread(reader.fileno(), at - start, start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            at = start
        whole = record_of(os.pread(reader.fileno(), end - keep, keep)) is not None
    if whole:
        os.write(fd, b"\n")
    else:
        os.ftruncate(fd, keep)
    os.fsync(fd)


def _fsync_dir(directory: Path) -> None:
    """Make a new file's directory entry durable too."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
