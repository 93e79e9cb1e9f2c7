"""What the file tools will open: regular files only (a FIFO, a device or a socket is
refused before it is read, so nothing waits on it), text that is not too big to edit, and
the tell-tale of a binary file (a NUL byte early on). Every refusal names the file and why."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tui_agent.builtin.workspace import Refused, Workspace

T = TypeVar("T")

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


def open_regular(workspace: Workspace, path: Path) -> tuple[int, os.stat_result]:
    """A descriptor on the resolved ``path``, opened without blocking (a FIFO swapped in
    after the check cannot hang the open) and without following a symlink swapped in for
    it, then checked again on the descriptor: a regular file, where ``path`` said
    (:meth:`Workspace.confirm`)."""
    shown = workspace.shown(path)
    try:
        fd = os.open(path, READING)
    except OSError as exc:
        raise _open_failed(shown, exc) from None
    try:
        workspace.confirm(fd, path)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            regular(path, shown)  # names what it is
            raise Refused(f"{shown} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


READING = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _open_failed(shown: str, exc: OSError, path: Path | None = None) -> Refused:
    swapped = exc.errno == errno.ENOTDIR and path is not None and path.is_symlink()
    if exc.errno == errno.ELOOP or swapped:  # O_NOFOLLOW met a symlink
        return Refused(f"{shown} became a symlink after it was checked: it is not touched")
    if isinstance(exc, FileNotFoundError):
        return Refused(f"{shown} does not exist")
    return Refused(f"{shown} cannot be opened: {exc.strerror or exc}")


def open_folder(workspace: Workspace, folder: Path, *, create: bool = False) -> int:
    """A descriptor on the resolved ``folder`` (made, with its parents, when ``create``),
    each step opened without following a symlink and the first checked on its descriptor:
    a folder swapped for a symlink after :meth:`Workspace.resolve` is refused, and no
    folder is made through one."""
    missing: list[str] = []
    start = folder
    while create and not os.path.lexists(start) and start != start.parent:
        missing.insert(0, start.name)
        start = start.parent
    try:
        fd = os.open(start, FOLDER)
    except OSError as exc:
        raise _open_failed(workspace.shown(start), exc, start) from None
    try:
        workspace.confirm(fd, start)
        for name in missing:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=fd)
            inner = os.open(name, FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError as exc:
        os.close(fd)
        raise Refused(f"{workspace.shown(folder)} cannot be made: {exc.strerror or exc}") \
            from None
    except BaseException:
        os.close(fd)
        raise
    return fd


async def in_thread(work: Callable[[], T], *, changes: bool = False) -> T:
    """``work`` (a tool's blocking file IO) on a worker thread, so the server's loop (the
    readers of background jobs, other calls) goes on meanwhile. A call cancelled while
    it looks is left to its thread; one that ``changes`` a file is waited for (a write is
    short, and its checkpoint and rename belong together)."""
    import anyio

    return await anyio.to_thread.run_sync(work, abandon_on_cancel=not changes)


def with_note(answer: str, note: str) -> str:
    """``answer`` and what the write hook said (the change cannot be undone...), if any."""
    return f"{answer}\n({note}; /rewind cannot restore this change)" if note else answer


def is_binary(head: bytes) -> bool:
    """A NUL byte early on, as git and ripgrep judge it."""
    return b"\0" in head[:SNIFF]


def whole_text(workspace: Workspace, path: Path) -> str:
    """The text of ``path`` for an edit: a regular UTF-8 text file under :data:`MAX_EDIT`."""
    shown = workspace.shown(path)
    fd, info = open_regular(workspace, path)
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


def replace_file(workspace: Workspace, path: Path, text: str) -> str:
    """Write ``text`` to the resolved ``path`` through a new temporary file renamed over
    it, both relative to the folder's descriptor (:func:`open_folder`): a reader never sees
    half a file, a symlink planted at the temporary name or swapped in on the way is never
    followed, and an existing file's permissions are kept. The write hook
    (:meth:`Workspace.writing`) runs once the new content is on disk, just before the
    rename, so a write that fails (no space, no permission) leaves no checkpoint behind,
    and a rename that fails withdraws the one it left (:meth:`Workspace.unwritten`);
    returns what the hook said."""
    folder = open_folder(workspace, path.parent, create=True)
    try:
        try:
            old = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISLNK(old.st_mode):
            raise _open_failed(workspace.shown(path), OSError(errno.ELOOP, "symlink"))
        if old is not None and not stat.S_ISREG(old.st_mode):
            regular(path, workspace.shown(path))  # names what it is
            raise Refused(f"{workspace.shown(path)} is not a regular file")
        temp = _write_temp(folder, path.name, text, old)
        announced = False
        try:
            said = workspace.writing(path)
            announced = True
            os.replace(temp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            if announced:  # the checkpoint's line names a change that never happened
                workspace.unwritten(path)
            raise
    except OSError as exc:
        raise Refused(f"{workspace.shown(path)} cannot be written: {exc.strerror or exc}") \
            from None
    finally:
        os.close(folder)
    return said


def _write_temp(folder: int, name: str, text: str, old: os.stat_result | None) -> str:
    """A new file in ``folder`` holding ``text``, with ``old``'s permissions (a new file:
    the umask's); its name. Created exclusively: a name taken, by a symlink or anything
    else, is never opened, another is tried."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(10):
        temp = f".{name}.{secrets.token_hex(6)}.tui-agent.tmp"
        try:
            fd = os.open(temp, flags, 0o600 if old is not None else 0o666, dir_fd=folder)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name", name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            if old is not None:
                os.fchmod(f.fileno(), old.st_mode & 0o7777)
            f.write(text)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise
    return temp
