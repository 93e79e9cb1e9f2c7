"""What the file tools will open: regular files only (a FIFO, a device or a socket is
refused before it is read, so nothing waits on it), text that is not too big to edit, and
the tell-tale of a binary file (a NUL byte early on). Every refusal names the file and why."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tui_agent.builtin.workspace import Refused, Workspace

MAX_EDIT = 10 * 1024 * 1024
"""The largest file ``edit`` and ``read`` of a whole image take in memory."""
SNIFF = 8192
"""Bytes looked at to tell a binary file from text."""
KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISSOCK, "a socket"))


def size_text(size: int) -> str:
    """``size`` bytes for people: 812 B, 4.2 KB, 5.0 GB."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def regular(path: Path, shown: str) -> os.stat_result:
    """The status of ``path``, a regular file; :class:`Refused` for anything else."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise Refused(f"{shown} does not exist") from None
    except OSError as exc:
        raise Refused(f"{shown} cannot be read: {exc.strerror or exc}") from None
    for test, kind in KINDS:
        if test(info.st_mode):
            hint = " (use list for a folder)" if kind == "a folder" else ""
            raise Refused(f"{shown} is {kind}, not a regular file: it is not read{hint}")
    return info


def open_regular(path: Path, shown: str) -> tuple[int, os.stat_result]:
    """A descriptor on ``path`` opened without blocking (a FIFO swapped in after the check
    cannot hang the open) and checked again on the descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Refused(f"{shown} cannot be opened: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        regular(path, shown)  # names what it is
        raise Refused(f"{shown} is not a regular file")
    os.set_blocking(fd, True)
    return fd, info


def is_binary(head: bytes) -> bool:
    """A NUL byte early on, as git and ripgrep judge it."""
    return b"\0" in head[:SNIFF]


def whole_text(workspace: Workspace, path: Path) -> str:
    """The text of ``path`` for an edit: a regular UTF-8 text file under :data:`MAX_EDIT`."""
    shown = workspace.shown(path)
    fd, info = open_regular(path, shown)
    with os.fdopen(fd, "rb") as f:
        if info.st_size > MAX_EDIT:
            raise Refused(f"{shown} is {size_text(info.st_size)}: files over "
                          f"{size_text(MAX_EDIT)} are not edited (use write to replace it)")
        data = f.read(MAX_EDIT + 1)
    if is_binary(data):
        raise Refused(f"{shown} is a binary file ({size_text(info.st_size)}): it is not edited")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"{shown} is not UTF-8 text (byte {exc.start}): it is not edited") \
            from None


def replace_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it (a reader never
    sees half a file), keeping an existing file's permissions."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tui-agent-{os.getpid()}.tmp")
    try:
        with open(temp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
