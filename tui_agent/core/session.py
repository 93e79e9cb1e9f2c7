"""Conversations on disk: one append-only JSONL file each.

Records (one JSON object a line, ``kind`` first):

* ``meta``: written once when the file is created (id, creation time, model);
* ``message``: a finished message in OpenAI format, fsynced when written;
* ``partial``: a piece of an assistant reply still streaming (flushed, not
  fsynced), superseded by the ``message`` with the same ``seq``;
* ``turn``: the end of a turn, with its usage and why it stopped;
* ``compaction``: what the model reads from then on instead of the first ``replaces``
  messages (their ``summary``), and which tool results it reads as a stub. The messages
  themselves stay in the file; the last compaction is where a resumed session goes on.

A crash loses at most the reply in flight, and even that is recovered from its
partial records, marked incomplete. The file is never rewritten; a torn last
line is skipped on load, and cut before the next record is appended (so it cannot take
that record down with it). Known secret values are masked before anything is
written.
"""

from __future__ import annotations

import bisect
import contextlib
import fcntl
import json
import os
import secrets as _secrets
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from tui_agent.config.interpolate import StreamMasker, mask, mask_json
from tui_agent.core.events import Usage, masked
from tui_agent.tools.text import clean

FORMAT_VERSION = 1
PARTIAL_FLUSH_SECONDS = 0.25


class SessionError(Exception):
    """A session cannot be found, opened or written; the message says which and why."""


@dataclass
class Entry:
    """One message of a loaded conversation."""

    message: dict[str, Any]
    incomplete: bool = False


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

    def title(self, width: int = 60) -> str:
        for e in self.entries:
            content = e.message.get("content")
            if isinstance(content, list):  # words and images: the words
                content = next((p.get("text") for p in content if isinstance(p, dict)), None)
            if e.message.get("role") == "user" and isinstance(content, str):
                text = " ".join(clean(content).split())
                return text if len(text) <= width else text[: width - 1] + "…"
        return "(empty)"


def new_id() -> str:
    """Sortable by time, unique enough across processes: ``20261122-014500-3fa2c1``."""
    return f"{datetime.now():%Y%m%d-%H%M%S}-{_secrets.token_hex(3)}"


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
        created = not path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = open(path, "ab")  # noqa: SIM115 - held for the session
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.close()
            raise SessionError(f"session {self.id} is open in another tui-agent process "
                               f"({path})") from None
        if created:
            _fsync_dir(path.parent)
        else:
            _trim_torn_tail(path, self._file.fileno())

    @classmethod
    def create(cls, path: Path, meta: dict[str, Any],
               secrets: Iterable[str] = ()) -> SessionWriter:
        """Start a new session file at ``path`` (``SessionStore.new_path()`` picks one)."""
        writer = cls(path, secrets)
        writer._write({"kind": "meta", "version": FORMAT_VERSION, "id": writer.id,
                       "created": datetime.now().astimezone().isoformat(timespec="seconds"),
                       **meta}, sync=True)
        return writer

    @classmethod
    def resume(cls, conversation: Conversation, secrets: Iterable[str] = ()) -> SessionWriter:
        writer = cls(conversation.path, secrets)
        writer._seq = conversation.next_seq
        return writer

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
                usage: Usage | None = None, sync: bool = True) -> None:
        """Record a finished message; with ``sync`` it is on disk when this returns."""
        record: dict[str, Any] = {"kind": "message", "seq": self._seq,
                                  "at": round(time.time(), 3), "message": message}
        if incomplete:
            record["incomplete"] = True
        if usage is not None:
            record["usage"] = asdict(usage)
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
        directory.mkdir(exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)[:100] or "call"
        target = directory / f"{safe}.txt"
        if not (keep and target.exists()):
            target.write_text(mask(text, self._secrets), encoding="utf-8")
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
            self._file.close()

    def _write(self, record: dict[str, Any], *, sync: bool) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        line = mask_json(line, self._secrets)
        self._file.write(line.encode("utf-8") + b"\n")
        self._file.flush()
        if sync:
            os.fsync(self._file.fileno())


def _trim_torn_tail(path: Path, fd: int) -> None:
    """Cut a last line that a crash left unfinished (no newline), before anything is
    appended (``fd``, the locked append handle): otherwise the next record would continue
    it, on the same line, and be skipped with it on the next load. What is cut was never
    a whole record."""
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
    os.ftruncate(fd, keep)
    os.fsync(fd)


def _fsync_dir(directory: Path) -> None:
    """Make a new file's directory entry durable too."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
        try:
            record = json.loads(line)
            kind = record["kind"]
        except (ValueError, KeyError, TypeError):
            conv.skipped_lines += 1
            continue
        seq = record.get("seq")
        if kind == "meta":
            conv.meta = record
        elif kind == "message" and isinstance(record.get("message"), dict):
            key = seq if isinstance(seq, int) else conv.next_seq
            messages[key] = Entry(masked(record["message"], hidden),
                                  bool(record.get("incomplete")))
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


class SessionStore:
    """The directory of session files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def new_path(self) -> Path:
        return self.directory / f"{new_id()}.jsonl"

    def paths(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name))

    def latest(self) -> Path | None:
        found = self.paths()
        return found[-1] if found else None

    def find(self, ref: str | None) -> Path:
        """A session by id, unique id prefix, or file path; the latest when ``ref`` is None."""
        if ref is None:
            latest = self.latest()
            if latest is None:
                raise SessionError(f"there is no session to resume yet (in {self.directory})")
            return latest
        as_path = Path(ref).expanduser()
        if as_path.suffix == ".jsonl" and as_path.exists():
            return as_path
        matches = [p for p in self.paths() if p.stem.startswith(ref)]
        exact = [p for p in matches if p.stem == ref]
        if exact or len(matches) == 1:
            return (exact or matches)[0]
        if not matches:
            raise SessionError(f"no session '{ref}' in {self.directory} "
                               "(tui-agent sessions lists them)")
        names = ", ".join(p.stem for p in matches[:5])
        raise SessionError(f"'{ref}' matches {len(matches)} sessions ({names}); give more of it")
