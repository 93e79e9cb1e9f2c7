"""Checkpoints of what a ``shell`` command changes in the project (:class:`ShellWatch`).

bubblewrap 0.8 has no overlay, and a command may run unsandboxed or in docker, so the
changed files are found by looking, the same way under every sandbox: before a command,
:meth:`ShellWatch.before` lists the regular files under the folders it may write (their
size, mtime and inode) and holds the content of each small one in memory; after it,
:meth:`ShellWatch.after` lists them again and appends to the journal, for every file that
changed, appeared or went away, its content before (or that it did not exist), so
``/rewind`` restores it like a file ``edit`` wrote.

Reading the project before every command would be slow, so the copies are a cache: a file
whose size, mtime and inode are what they were is not read again (the first command in a
project reads it all, the next ones only list it). The copies are held in memory
(:attr:`ShellWatch.held`, within :data:`MOST_BYTES`), and only those of the files a
command changed are written to the store, as blobs, after it: writing a blob for every
file of the project made the first command in a 5,000-file project take seconds.

Bounded, and honest about the bounds: at most :data:`MOST_FILES` files are watched (a
command's changes past them are not seen, and its result says the project was too large),
files over :data:`MOST_FILE` and past :data:`MOST_BYTES` of copies in all are watched but
not kept (a change to one is journaled as not kept, and the command's result names it).
``.git`` folders are not watched (a rewind of files does not rewind the repository's
history), nor the store itself.

A background job's changes are journaled when it ends, against the look taken when it
started: a file a tool (``edit``, ``write``, another command) journaled since then is
left out of the job's lines (the tool's line already says what it held before, and the
job's start look is older than that), and the store tells the watch of every file a tool
keeps, so the next look reads it again instead of trusting its signature. Blobs no change
needs are swept holding the store's lock, so a ``keep`` that reuses one is never undone.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.builtin.checkpoints.store import Checkpoints, here

MOST_FILES = 20_000
"""The most files watched in the folders a command may write."""
MOST_FILE = 1024 * 1024
"""The largest file whose content is kept before a command (1 MiB)."""
MOST_BYTES = 64 * 1024 * 1024
"""The most bytes of copies of the project held for the commands (64 MiB, in the server's
memory until a command changes their file), beside the store's own bound."""
SKIPPED_FOLDERS = frozenset({".git"})

Signature = tuple[int, int, int]
"""A file's size, mtime (ns) and inode: the same, the file was not written."""


@dataclass
class Before:
    """The folders as a command found them: each regular file's signature and the blob of
    its content (None: not kept, ``reasons`` says why)."""

    roots: list[Path]
    files: dict[str, tuple[Signature, str | None]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    position: int = 0
    """The journal's position when the look was taken: a line from there on is a
    tool's change made while the command ran."""
    full: bool = False
    """More than :data:`MOST_FILES` files: the rest is not watched."""


class ShellWatch:
    """The watch of one store; :meth:`before` and :meth:`after` around each command."""

    def __init__(self, store: Checkpoints, *, most_files: int = MOST_FILES,
                 most_file: int = MOST_FILE, most_bytes: int = MOST_BYTES) -> None:
        self.store = store
        self.most_files, self.most_file, self.most_bytes = most_files, most_file, most_bytes
        self.known: dict[str, tuple[Signature, str]] = {}
        """The digest of each file's content as last read, by its signature then."""
        self.held: dict[str, bytes] = {}
        """The contents :attr:`known` names and the store does not have yet, by their
        digest (written to the store when a command changed their file)."""
        self._journal_inode = -1
        self._lock = threading.Lock()
        store.on_keep.append(self._kept)

    def _kept(self, path: str) -> None:
        """A tool kept ``path`` before writing it: read it again at the next look."""
        self.known.pop(path, None)

    def _walk(self, roots: Sequence[Path], most: int) -> Iterator[tuple[str, os.stat_result]]:
        skip = os.path.realpath(self.store.directory)
        stack = [str(root) for root in roots]
        seen = 0
        while stack:
            folder = stack.pop()
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        if entry.name not in SKIPPED_FOLDERS and entry.path != skip:
                            stack.append(entry.path)
                    elif stat.S_ISREG(info.st_mode):
                        seen += 1
                        if seen > most:
                            return
                        yield entry.path, info

    def before(self, roots: Sequence[Path]) -> Before:
        """List the files under ``roots`` and keep the content of each small one that
        is not kept already. Never raises (a store that cannot be written: nothing is
        kept, and :meth:`after` says so for each file changed)."""
        with self._lock:
            self._check_blobs()
            found = Before(list(roots), position=self.store.position())
            total = 0
            stale: set[str] = set()
            walked = 0
            for path, info in self._walk(roots, self.most_files):
                walked += 1
                signature = (info.st_size, info.st_mtime_ns, info.st_ino)
                known = self.known.get(path)
                if known is not None and known[0] == signature:
                    found.files[path] = (signature, known[1])
                    total += info.st_size
                    continue
                if known is not None:
                    stale.add(known[1])
                    del self.known[path]
                digest, why = self._read(path, info, total)
                if digest is None:
                    found.reasons[path] = why
                else:
                    total += info.st_size
                    self.known[path] = (signature, digest)
                found.files[path] = (signature, digest)
            found.full = walked >= self.most_files
            for path in [p for p in self.known if p not in found.files]:
                stale.add(self.known.pop(path)[1])
            self._forget(stale)
            return found

    def _read(self, path: str, info: os.stat_result, total: int) -> tuple[str | None, str]:
        if info.st_size > self.most_file:
            return None, f"larger than {self.most_file >> 10} KiB"
        if total + info.st_size > self.most_bytes:
            return None, (f"the project's copies for the shell passed "
                          f"{self.most_bytes >> 20} MiB")
        try:
            with open(path, "rb") as file:
                content = file.read(self.most_file + 1)
            if len(content) > self.most_file:
                return None, f"larger than {self.most_file >> 10} KiB"
            digest = hashlib.sha256(content).hexdigest()
            self.held[digest] = content
            return digest, ""
        except OSError as exc:
            return None, f"could not be read ({exc.strerror or exc})"

    def after(self, found: Before) -> list[str]:
        """Journal each file that changed since ``found`` with its content before it;
        the notes for the command's result: what could not be kept, and why."""
        with self._lock:
            now = dict(self._walk(found.roots, self.most_files * 2))
            tools = {line.path for line in self.store.lines() if line.seq >= found.position}
            changes: list[tuple[str, str | None, str]] = []
            for path, (signature, digest) in found.files.items():
                if path in tools:
                    self.known.pop(path, None)
                    continue
                info = now.get(path)
                if info is not None and (info.st_size, info.st_mtime_ns,
                                         info.st_ino) == signature:
                    continue
                self.known.pop(path, None)  # read again before the next command
                if digest is None:
                    changes.append((path, None, found.reasons.get(path, "not kept")))
                    continue
                why = self._write(digest)
                if why:
                    changes.append((path, None, why))
                elif not self.store.blobs.path(digest).exists():
                    changes.append((path, None, "its copy was dropped by the store's bounds"))
                else:
                    changes.append((path, digest, ""))
            changes += [(path, None, "") for path in now if path not in found.files
                        and path not in tools and not found.full]
            notes = [f"{path} ({why})" for path, _, why in changes if why]
            if changes:
                try:
                    self.store.record(changes)
                except OSError as exc:
                    return [f"the checkpoint store could not be written: "
                            f"{exc.strerror or exc}"]
            if found.full:
                notes.append(f"files past the first {self.most_files:,} in the project are "
                             "not watched")
            return notes

    def _write(self, digest: str) -> str:
        """Put the content held as ``digest`` in the store (if held); why it could not."""
        content = self.held.get(digest)
        if content is None:
            return ""
        try:
            self.store.blobs.put(content, sync=False)
        except OSError as exc:
            return f"its copy could not be written ({exc.strerror or exc})"
        del self.held[digest]
        return ""

    def _check_blobs(self) -> None:
        """After the store dropped old changes (its journal rewritten), forget the blobs
        that went with them."""
        try:
            inode = os.stat(self.store.journal).st_ino
        except OSError:
            inode = -1
        if inode != self._journal_inode:
            self._journal_inode = inode
            for path, (_, digest) in list(self.known.items()):
                if digest not in self.held and not self.store.blobs.path(digest).exists():
                    del self.known[path]

    def _forget(self, stale: set[str]) -> None:
        """Let go of the copies of contents no file has now: those held (and those a
        file left :attr:`known` for without a look, a tool having kept it), and those
        in the store that no change needs."""
        live = {digest for _, digest in self.known.values()}
        for digest in [d for d in self.held if d not in live]:
            del self.held[digest]
        stale -= live
        if not stale:
            return
        # under the lock, the journal read there: a keep that reuses one of these blobs
        # appends its line holding the lock too, before or after, never in between
        with contextlib.suppress(OSError), self.store.locked():
            stale -= {line.blob for line in self.store.lines() if line.blob}
            for digest in stale:
                with contextlib.suppress(OSError):
                    self.store.blobs.path(digest).unlink()


_HERE: dict[str, ShellWatch] = {}


def shell_watch() -> ShellWatch:
    """The watch over the store of the folder the server runs in (the store
    ``before_write`` keeps ``edit`` and ``write``'s files in)."""
    folder = os.getcwd()
    watch = _HERE.get(folder)
    if watch is None:
        watch = _HERE[folder] = ShellWatch(here())
    return watch
