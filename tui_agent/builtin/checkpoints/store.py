"""One store of checkpoints (:class:`Checkpoints`): what the file tools call before a
write (:meth:`~Checkpoints.keep`, or :func:`before_write` for the server's own folder),
and what ``/rewind`` calls (:meth:`~Checkpoints.position_at`,
:meth:`~Checkpoints.restore`). The blobs are :mod:`.blobs`', the journal :mod:`.journal`'s.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.builtin.checkpoints import journal
from tui_agent.builtin.checkpoints.blobs import Blobs
from tui_agent.builtin.checkpoints.journal import Line
from tui_agent.config import paths
from tui_agent.config.private import PRIVATE_FILE, private_dir

MOST_FILE = 8 * 1024 * 1024
"""The largest file kept (8 MiB): a bigger one is noted in the journal, not kept, and
``/rewind`` lists it as not restorable."""
MOST_BYTES = 256 * 1024 * 1024
"""The most bytes of blobs a store holds (256 MiB); past it the oldest changes are
dropped."""
MOST_ENTRIES = 5_000
"""The most changes a journal holds; past it the oldest are dropped."""


def store_for(folder: Path) -> Path:
    """Where the checkpoints of the server run in ``folder`` are kept: under the data
    directory, beside the sessions, named by the folder's name and a digest of its path
    (the same folder always finds the same store; two folders never share one)."""
    resolved = os.path.realpath(folder)
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(resolved).name)
    return paths.data_dir() / "checkpoints" / f"{name[:40] or 'root'}-{digest}"


@dataclass
class Restored:
    """What :meth:`Checkpoints.restore` did: the files put back as they were, those
    removed (they did not exist then), and those it could not restore, with why."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    note: str = ""
    """Said of the whole (older changes dropped by the store's bounds)."""


class Checkpoints:
    """The checkpoints kept in ``directory`` (see :func:`store_for`)."""

    def __init__(self, directory: Path, *, most_file: int = MOST_FILE,
                 most_bytes: int = MOST_BYTES, most_entries: int = MOST_ENTRIES) -> None:
        self.directory = directory
        self.blobs = Blobs(directory / "blobs")
        self.journal = directory / "journal.jsonl"
        self.most_file, self.most_bytes, self.most_entries = most_file, most_bytes, most_entries

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self.directory)
        fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def lines(self) -> list[Line]:
        """The changes recorded, oldest first."""
        return journal.read(self.journal)

    def position(self) -> int:
        """The journal's position now: the sequence number the next change gets."""
        lines = self.lines()
        return lines[-1].seq + 1 if lines else 0

    def position_at(self, when: float) -> int:
        """The position the journal had at ``when`` (a time as ``time.time()`` gives):
        the first change recorded at or after it."""
        return next((line.seq for line in self.lines() if line.at >= when), self.position())

    def keep(self, path: str | os.PathLike[str]) -> str:
        """Keep ``path``'s content as it is now, before a tool writes it; returns what
        to tell (empty: kept, or nothing to keep). Never raises: a store that cannot be
        written says so, and the write goes on."""
        target = os.path.realpath(path)
        try:
            with self._locked():
                line = self._record(target)
                journal.append(self.journal, line)
                self._trim()
        except OSError as exc:
            return f"no checkpoint of {target}: {exc.strerror or exc}"
        return f"no checkpoint of {target}: {line.skipped}" if line.skipped else ""

    def record(self, changes: Sequence[tuple[str, str | None, str]]) -> None:
        """Append one line per ``(path, blob, skipped)`` a shell command changed, its
        content before kept already as ``blob`` (None and no ``skipped``: the file did
        not exist). Raises OSError."""
        with self._locked():
            lines = self.lines()
            seq, now = (lines[-1].seq + 1 if lines else 0), time.time()
            for offset, (path, blob, skipped) in enumerate(changes):
                journal.append(self.journal, Line(
                    seq + offset, now, path, blob, absent=blob is None and not skipped,
                    skipped=skipped))
            self._trim()

    def _record(self, target: str) -> Line:
        lines = self.lines()
        seq, now = (lines[-1].seq + 1 if lines else 0), time.time()
        try:
            info = os.stat(target)
        except FileNotFoundError:
            return Line(seq, now, target, absent=True)
        if not stat.S_ISREG(info.st_mode):
            return Line(seq, now, target, skipped="not a regular file")
        if info.st_size > self.most_file:
            return Line(seq, now, target, skipped=f"larger than {self.most_file >> 20} MiB")
        with open(target, "rb") as file:
            content = file.read(self.most_file + 1)
        if len(content) > self.most_file:  # grew since its stat
            return Line(seq, now, target, skipped=f"larger than {self.most_file >> 20} MiB")
        return Line(seq, now, target, self.blobs.put(content))

    def _trim(self) -> None:
        """Drop the oldest changes past the bounds, and the blobs no change needs."""
        lines = self.lines()
        sizes = {d: self.blobs.size(d) for d in {ln.blob for ln in lines if ln.blob}}
        total, kept = 0, 0
        for line in reversed(lines):
            fresh = line.blob is not None and line.blob in sizes
            weight = sizes.pop(line.blob) if fresh and line.blob else 0
            if kept >= self.most_entries or total + weight > self.most_bytes:
                break
            total, kept = total + weight, kept + 1
        if kept < len(lines):
            rest = lines[len(lines) - kept:]
            journal.rewrite(self.journal, rest)
            self.blobs.keep_only(ln.blob for ln in rest if ln.blob)

    def restore(self, since: int) -> Restored:
        """Put every file changed at position ``since`` or later back as it was then (a
        file that did not exist is removed). The files' contents now are kept first, so a
        restore can itself be undone. Never raises: what failed is listed."""
        done = Restored()
        with self._locked():
            lines = self.lines()
        if lines and since < lines[0].seq:
            done.note = ("older checkpoints were dropped (the store keeps "
                         f"{self.most_entries:,} changes, {self.most_bytes >> 20} MiB): a "
                         "file changed before them is restored only as far back as they go")
        first: dict[str, Line] = {}
        for line in lines:
            if line.seq >= since:
                first.setdefault(line.path, line)
        for path, line in first.items():
            self._put_back(path, line, done)
        return done

    def _put_back(self, path: str, line: Line, done: Restored) -> None:
        if line.skipped:
            done.failed.append((path, f"not kept ({line.skipped})"))
            return
        try:
            # read before keeping what is there now: that keep may drop old blobs
            content = None if line.blob is None else self.blobs.get(line.blob)
            self.keep(path)
            if content is None:
                if os.path.lexists(path):
                    os.unlink(path)
                    done.removed.append(path)
                return
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as out:
                out.write(content)
            done.restored.append(path)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            done.failed.append((path, reason))


_HERE: dict[str, Checkpoints] = {}


def before_write(path: str | os.PathLike[str]) -> str:
    """Keep ``path`` before a built-in tool writes it, in the store of the folder the
    server runs in (:func:`store_for` of the working directory). What the file tools call
    (``Workspace.before_write``); returns what to tell the model, usually nothing."""
    folder = os.getcwd()
    store = _HERE.get(folder)
    if store is None:
        store = _HERE[folder] = Checkpoints(store_for(Path(folder)))
    return store.keep(path)
