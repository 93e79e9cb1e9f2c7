"""One store of checkpoints (:class:`Checkpoints`): what the file tools call before a
write (:meth:`~Checkpoints.keep`, or :func:`before_write` for the server's own folder),
and what ``/rewind`` calls (:meth:`~Checkpoints.position_at`,
:meth:`~Checkpoints.put_back`). The blobs are :mod:`.blobs`', the journal :mod:`.journal`'s;
each line is tagged with the conversation of the call that made it (:mod:`.caller`), and a
file is put back only where :mod:`.putting` allows.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tui_agent.builtin.checkpoints import journal, putting
from tui_agent.builtin.checkpoints.blobs import Blobs
from tui_agent.builtin.checkpoints.caller import CALLER, Caller, note_store
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
"""The most changes a journal holds: past it by a tenth, the oldest are dropped down to it
(so a full store rewrites its journal once every few hundred changes, not at each)."""


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
        self.on_keep: list[Callable[[str], None]] = []
        """Told each path kept (the shell's watch reads it again before its next look)."""
        self._read: tuple[tuple[int, int, int], list[Line]] | None = None
        """The journal as last read or written here, with its inode, size and mtime then:
        while they are the same it is not read again (each keep read the 5,000 lines of a
        full store twice: half a second an edit)."""
        self._sizes: dict[str, int] = {}
        """Each blob's size, as first found (a blob's content never changes; one put
        here or recorded is found again, it may have been missing)."""

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's ``flock`` (every change to the journal and blobs is made
        holding it)."""
        private_dir(self.directory)
        fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def lines(self) -> list[Line]:
        """The changes recorded, oldest first: read again only when the journal changed
        since this object last read or wrote it (another process kept or restored; every
        write here goes through :meth:`_wrote`)."""
        signature = self._signature()
        cached = self._read
        if cached is None or cached[0] != signature:
            cached = self._read = (signature, journal.read(self.journal))
        return list(cached[1])

    def _signature(self) -> tuple[int, int, int]:
        """The journal's inode, size and mtime: an append changes its size, a rewrite
        (a new file renamed over it) its inode."""
        try:
            info = os.stat(self.journal)
        except FileNotFoundError:
            return (0, 0, 0)
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def _wrote(self, lines: list[Line]) -> None:
        """The journal now holds ``lines``, written here holding the lock (no other
        writer in between, so its signature now is theirs)."""
        self._read = (self._signature(), list(lines))

    def _size(self, digest: str) -> int:
        """A blob's size (0: not there)."""
        if digest not in self._sizes:
            self._sizes[digest] = self.blobs.size(digest)
        return self._sizes[digest]

    def position(self) -> int:
        """The journal's position now: the sequence number the next change gets."""
        lines = self.lines()
        return lines[-1].seq + 1 if lines else 0

    def position_at(self, when: float) -> int:
        """The position the journal had at ``when`` (a time as ``time.time()`` gives):
        the first change recorded at or after it."""
        return next((line.seq for line in self.lines() if line.at >= when), self.position())

    def keep(self, path: str | os.PathLike[str]) -> str:
        """Keep ``path``'s content as it is now, before a tool writes it, tagged with the
        calling conversation (:data:`~.caller.CALLER`); returns what to tell (empty:
        kept, or nothing to keep). Never raises: a store that cannot be written says so,
        and the write goes on."""
        target = os.path.realpath(path)
        caller = CALLER.get()
        try:
            with self.locked():
                lines = self.lines()
                line = self._record(target, caller, lines)
                journal.append(self.journal, line)
                self._wrote([*lines, line])
                self._trim()
            if caller is not None:
                note_store(caller.session, self.directory)
        except OSError as exc:
            return f"no checkpoint of {target}: {exc.strerror or exc}"
        finally:
            for told in self.on_keep:
                told(target)
        return f"no checkpoint of {target}: {line.skipped}" if line.skipped else ""

    def withdraw(self, path: str | os.PathLike[str]) -> bool:
        """The write :meth:`keep` was called for did not happen (it failed): drop the
        newest line for ``path`` by the same caller, so a later ``/rewind`` does not
        "restore" a change never made (removing a file created there since). Whether a
        line was dropped. Raises OSError."""
        target, caller = os.path.realpath(path), CALLER.get()
        session = caller.session if caller is not None else ""
        with self.locked():
            lines = self.lines()
            newest = next((n for n in range(len(lines) - 1, -1, -1)
                           if lines[n].path == target and lines[n].session == session), None)
            if newest is None:
                return False
            rest = lines[:newest] + lines[newest + 1:]
            journal.rewrite(self.journal, rest)
            self._wrote(rest)
            return True

    def record(self, changes: Sequence[tuple[str, str | None, str]]) -> None:
        """Append one line per ``(path, blob, skipped)`` a shell command changed, its
        content before kept already as ``blob`` (None and no ``skipped``: the file did
        not exist), tagged with the calling conversation. Raises OSError."""
        caller = CALLER.get()
        session, turn = (caller.session, caller.turn) if caller is not None else ("", -1)
        with self.locked():
            lines = self.lines()
            seq, now = (lines[-1].seq + 1 if lines else 0), time.time()
            for offset, (path, blob, skipped) in enumerate(changes):
                line = Line(seq + offset, now, path, blob, absent=blob is None and not skipped,
                            skipped=skipped, session=session, turn=turn)
                journal.append(self.journal, line)
                lines.append(line)
                if blob is not None:
                    self._sizes.pop(blob, None)  # put by the shell's watch: look again
            self._wrote(lines)
            self._trim()
        if caller is not None:
            note_store(caller.session, self.directory)

    def _record(self, target: str, caller: Caller | None, lines: list[Line]) -> Line:
        line = Line(lines[-1].seq + 1 if lines else 0, time.time(), target)
        if caller is not None:
            line = replace(line, session=caller.session, turn=caller.turn)
        try:
            info = os.stat(target)
        except FileNotFoundError:
            return replace(line, absent=True)
        if not stat.S_ISREG(info.st_mode):
            return replace(line, skipped="not a regular file")
        too_large = replace(line, skipped=f"larger than {self.most_file >> 20} MiB")
        if info.st_size > self.most_file:
            return too_large
        with open(target, "rb") as file:
            content = file.read(self.most_file + 1)
        if len(content) > self.most_file:  # grew since its stat
            return too_large
        digest = self.blobs.put(content)
        self._sizes[digest] = len(content)
        return replace(line, blob=digest)

    def _trim(self) -> None:
        """Drop the oldest changes past the bounds, and the blobs no change needs. A
        journal past :attr:`most_entries` by no more than a tenth is left as it is (the
        byte bound is kept exactly): a full store then rewrites its journal and sweeps
        its blobs once every few hundred changes, down to its bound, not at each."""
        lines = self.lines()
        sizes = {d: self._size(d) for d in {ln.blob for ln in lines if ln.blob}}
        if (len(lines) <= self.most_entries + self.most_entries // 10
                and sum(sizes.values()) <= self.most_bytes):
            return
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
            self._wrote(rest)
            wanted = {ln.blob for ln in rest if ln.blob}
            self.blobs.keep_only(wanted)
            self._sizes = {d: n for d, n in self._sizes.items() if d in wanted}

    def restore(self, since: int, roots: Sequence[str]) -> Restored:
        """Put every file changed at position ``since`` or later back as it was then
        (:meth:`put_back` of those lines)."""
        with self.locked():
            lines = self.lines()
        done = self.put_back([line for line in lines if line.seq >= since], roots)
        if lines and since < lines[0].seq:
            done.note = self.dropped()
        return done

    def dropped(self) -> str:
        """What to say when changes a restore wanted were dropped by the bounds."""
        return ("older checkpoints were dropped (the store keeps "
                f"{self.most_entries:,} changes, {self.most_bytes >> 20} MiB): a file "
                "changed before them is restored only as far back as they go")

    def put_back(self, lines: Sequence[Line], roots: Sequence[str],
                 caller: Caller | None = None) -> Restored:
        """Put each file ``lines`` name back as its first (oldest) line there says it
        was: removed if it did not exist. Only inside ``roots`` and never through a
        symbolic link (:mod:`.putting`). The files' contents now are kept first (tagged
        ``caller``), so a restore can itself be undone. Never raises: what failed is
        listed, with why."""
        done = Restored()
        real_roots = [os.path.realpath(root) for root in roots]
        first: dict[str, Line] = {}
        for line in sorted(lines, key=lambda ln: ln.seq):
            first.setdefault(line.path, line)
        token = CALLER.set(caller)
        try:
            for path, line in first.items():
                self._put_back(path, line, real_roots, done)
        finally:
            CALLER.reset(token)
        return done

    def _put_back(self, path: str, line: Line, roots: list[str], done: Restored) -> None:
        if line.skipped:
            done.failed.append((path, f"not kept ({line.skipped})"))
            return
        why = putting.refusal(path, roots)
        if why:
            done.failed.append((path, why))
            return
        try:
            # read before keeping what is there now: that keep may drop old blobs
            content = None if line.blob is None else self.blobs.get(line.blob)
            self.keep(path)
            if content is None:
                if putting.remove(path):
                    done.removed.append(path)
                return
            putting.write(path, content)
            done.restored.append(path)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            done.failed.append((path, reason))


_HERE: dict[str, Checkpoints] = {}


def before_write(path: str | os.PathLike[str]) -> str:
    """Keep ``path`` before a built-in tool writes it, in the store of the folder the
    server runs in (:func:`store_for` of the working directory). What the file tools call
    (``Workspace.before_write``); returns what to tell the model, usually nothing."""
    return here().keep(path)


def not_written(path: str | os.PathLike[str]) -> None:
    """The write :func:`before_write` kept ``path`` for failed: withdraw its line
    (``Workspace.not_written``). A store that cannot be written leaves it; a later
    ``/rewind`` then finds the file as the line says or reports it."""
    with contextlib.suppress(OSError):
        here().withdraw(path)


def here() -> Checkpoints:
    """The store of the folder the server runs in (one object a process, shared by the
    file tools and the shell's watch)."""
    folder = os.getcwd()
    store = _HERE.get(folder)
    if store is None:
        store = _HERE[folder] = Checkpoints(store_for(Path(folder)))
    return store
