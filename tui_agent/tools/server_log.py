"""A server's stderr log: one file per server under the state dir (never the terminal,
never an unread pipe), rotated whenever it passes 1 MB, and its last lines for a report.

A stdio server writes its stderr into a pipe that :class:`ServerLog` pumps into the
file, so the file is rotated while the server writes, not only when it starts. What
reaches the file is masked line by line first (the secrets it is given, the learned
tokens, and a value after a secret's name or a ``Bearer``:
:func:`~tui_agent.config.interpolate.mask_said`): a server that echoes its token leaves
none on disk.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from pathlib import Path
from types import TracebackType
from typing import IO

from tui_agent.config.interpolate import mask_said
from tui_agent.config.private import open_append
from tui_agent.tools.text import clean

LOGGED = ("stdio", "docker", "docker-gateway")
"""Transports whose server's stderr goes to a log file."""
LOG_ROTATE_BYTES = 1_000_000
STDERR_TAIL_LINES = 20
ROTATED = "--- tui-agent: rotated, earlier lines are in"
STARTING = "--- tui-agent: starting"
"""Opens the lines of each start; the tail is what the server wrote since the last one."""


def log_path(log_dir: Path, server: str, transport: str | None) -> Path | None:
    """Where ``server``'s stderr goes, or None for a transport that has none."""
    return log_dir / f"{_file_safe(server)}.log" if transport in LOGGED else None


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "server"


LINE_HELD = 65_536
"""Bytes of a line without its end held for masking at most (then written as they are
masked: a server that never ends its line still reaches the file)."""


def open_log(path: Path, secrets: frozenset[str] = frozenset()) -> ServerLog:
    """The server's stderr log, rotated whenever it passes 1 MB; private to the user (a
    server's stderr may hold what it was given: tokens, paths, the user's data), and
    ``secrets`` masked in it."""
    return ServerLog(path, secrets)


class ServerLog:
    """A log file that rotates itself: what we write (``write``) and what the server
    writes into :meth:`fileno` (a pipe, pumped by a thread) both count toward the size."""

    def __init__(self, path: Path, secrets: frozenset[str] = frozenset()) -> None:
        self.path, self.secrets = path, secrets
        self._partial = b""
        """The server's line that has not ended yet, held to be masked whole."""
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self._file = self._open()
        self._pipe: tuple[int, int] | None = None
        self._closed = False

    def _open(self) -> IO[bytes]:
        file = os.fdopen(open_append(self.path), "ab")
        self._size = file.tell()
        return self._rotated(file) if self._size > LOG_ROTATE_BYTES else file

    def _rotated(self, file: IO[bytes]) -> IO[bytes]:
        """Close ``file``, keep it as ``NAME.log.1``, and give a fresh one."""
        file.close()
        with contextlib.suppress(OSError):
            self.path.replace(self.path.with_suffix(".log.1"))
        self._size = 0
        return os.fdopen(open_append(self.path), "ab")

    def write(self, text: str) -> int:
        self._put(self._masked(text.encode("utf-8", "replace")))
        return len(text)

    def _masked(self, data: bytes) -> bytes:
        """``data`` with its secrets masked; bytes that are not UTF-8 kept as they are."""
        text = data.decode("utf-8", "surrogateescape")
        return mask_said(text, self.secrets).encode("utf-8", "surrogateescape")

    def _take(self, chunk: bytes, *, ended: bool = False) -> None:
        """Mask and write the server's lines that ``chunk`` ends; hold the rest (all of
        it when ``ended``: the server's last words without a line break)."""
        data = self._partial + chunk
        cut = len(data) if ended or len(data) > LINE_HELD else data.rfind(b"\n") + 1
        self._partial = data[cut:]
        if cut:
            self._put(self._masked(data[:cut]))

    def _put(self, data: bytes) -> None:
        with self._lock:
            if self._closed:
                return
            with contextlib.suppress(OSError, ValueError):
                self._file.write(data)
                self._file.flush()
            self._size += len(data)
            if self._size > LOG_ROTATE_BYTES:
                self._file = self._rotated(self._file)
                self._file.write(f"{ROTATED} {self.path.name}.1 ---\n".encode())

    def flush(self) -> None:
        """Copy what the server wrote and we have not yet (its last words, before they
        are read back)."""
        if self._pipe is not None and not self._closed:
            self._drain(self._pipe[0], wait=0.0)
            with self._reading:
                self._take(b"", ended=True)

    def fileno(self) -> int:
        """The write end of the pipe a server's stderr goes into."""
        if self._pipe is None:
            self._pipe = os.pipe()
            os.set_blocking(self._pipe[0], False)
            threading.Thread(target=self._pumping, name="server-log", daemon=True).start()
        return self._pipe[1]

    def _pumping(self) -> None:
        assert self._pipe is not None
        try:
            while not self._closed and self._drain(self._pipe[0], wait=0.25):
                pass
        finally:  # the read end is the pump's: closed here, never under its feet
            with contextlib.suppress(OSError):
                os.close(self._pipe[0])

    def _drain(self, fd: int, wait: float) -> bool:
        """Copy what is in the pipe now (waiting up to ``wait`` for it); False at its end.
        One reader at a time, so the lines keep their order."""
        try:
            if wait and not select.select([fd], [], [], wait)[0]:
                return True
            with self._reading:
                while chunk := os.read(fd, 65536):
                    self._take(chunk)
        except BlockingIOError:
            return True
        except (OSError, ValueError):
            pass
        return False

    def close(self) -> None:
        """Copy what is left, then stop: the pump ends by itself within a quarter second
        (it is not waited for: this runs on the event loop)."""
        self.flush()
        with self._lock:
            self._closed = True
            if self._pipe is not None:
                with contextlib.suppress(OSError):
                    os.close(self._pipe[1])
            self._file.close()

    def __enter__(self) -> ServerLog:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def stderr_tail(path: Path | None, lines: int = STDERR_TAIL_LINES) -> list[str]:
    """The last lines the server wrote to stderr since it last started."""
    if path is None:
        return []
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 16_384))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    text = text.rsplit(STARTING, 1)[-1]
    shown = [clean(ln)[:300] for ln in text.splitlines()[1:] if ln.strip()]
    return shown[-lines:]
