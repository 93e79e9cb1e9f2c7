"""The content-addressed half of the store: each kept content once, in a file named by
its sha256 (``blobs/ab/abcdef….``), written to a temporary name, fsynced and renamed,
so a blob that exists is whole (a crash leaves at most a ``.tmp`` file, swept later)."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from tui_agent.config.private import PRIVATE_FILE, private_dir


class Blobs:
    """The blobs of one store, under ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, digest: str) -> Path:
        return self.directory / digest[:2] / digest

    def put(self, content: bytes, *, sync: bool = True) -> str:
        """Keep ``content`` (once: the same content is the same blob); its digest.
        ``sync`` False skips the fsync (the shell's copies of the project, thousands at
        once: one a crash left damaged is found by :meth:`get`'s check). Raises OSError."""
        digest = hashlib.sha256(content).hexdigest()
        target = self.path(digest)
        if target.exists():
            return digest
        private_dir(target.parent)
        temporary = target.with_name(f"{digest}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(content)
                out.flush()
                if sync:
                    os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        return digest

    def get(self, digest: str) -> bytes:
        """The content kept as ``digest``. Raises OSError (gone) or ValueError (its bytes
        are not what its name says: damaged)."""
        content = self.path(digest).read_bytes()
        if hashlib.sha256(content).hexdigest() != digest:
            raise ValueError(f"the kept copy {digest[:12]} is damaged")
        return content

    def size(self, digest: str) -> int:
        try:
            return self.path(digest).stat().st_size
        except OSError:
            return 0

    def keep_only(self, wanted: Iterable[str]) -> None:
        """Remove every blob not in ``wanted`` (and what a crash left half written)."""
        keep = set(wanted)
        if not self.directory.is_dir():
            return
        for folder in self.directory.iterdir():
            for blob in folder.iterdir() if folder.is_dir() else ():
                if blob.name not in keep:
                    with contextlib.suppress(OSError):
                        blob.unlink()
