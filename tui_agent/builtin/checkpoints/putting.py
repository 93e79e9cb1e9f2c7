"""Putting one file back as a checkpoint had it (S4 of the review): ``/rewind`` runs in the
front end with the user's rights, so what it writes is confined as the built-in tools
are. Only a path that is absolute, inside the conversation's folders and its own real
path (no symbolic link on its way or at its end) is touched; the content goes to a
temporary file created new (``O_EXCL | O_NOFOLLOW``) in the file's folder, opened once
and checked to be that folder, then renamed over the file, so a link planted there between
the checks and the write is replaced, never followed. Anything else is left alone, and
:func:`refusal` says why."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Sequence


def inside(path: str, roots: Sequence[str]) -> bool:
    """``path`` is one of ``roots`` or under one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def refusal(path: str, roots: Sequence[str]) -> str:
    """Why ``path`` must not be touched ("" when it may)."""
    if not os.path.isabs(path) or os.path.normpath(path) != path:
        return "not a plain absolute path"
    if not inside(path, roots):
        return f"outside this conversation's folders ({', '.join(roots) or 'none'})"
    if os.path.realpath(path) != path:
        return "a symbolic link is now on its way (it would lead out of place)"
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return "it is no longer a regular file"
    return ""


def _folder(path: str) -> int:
    """A descriptor of ``path``'s folder (made if missing), checked to be that very
    folder. Raises OSError."""
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        if os.readlink(f"/proc/self/fd/{fd}") != parent:
            raise OSError(f"its folder is not {parent} any more (a symbolic link)")
    except BaseException:
        os.close(fd)
        raise
    return fd


def write(path: str, content: bytes) -> None:
    """Put ``content`` at ``path`` (its mode kept when the file is there). Raises OSError."""
    folder = _folder(path)
    name = os.path.basename(path)
    temporary = f".{name[:100]}.tui-agent-rewind-{secrets.token_hex(6)}.tmp"
    try:
        try:
            mode = stat.S_IMODE(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            mode = 0o666  # less the umask, as any new file
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                     mode, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(content)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def remove(path: str) -> bool:
    """Remove the file at ``path`` (not a folder, not through a link); whether one was
    there. Raises OSError."""
    parent = os.path.dirname(path)
    try:
        folder = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False
    try:
        if os.readlink(f"/proc/self/fd/{folder}") != parent:
            raise OSError(f"its folder is not {parent} any more (a symbolic link)")
        name = os.path.basename(path)
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(info.st_mode):
            raise OSError("it is no longer a regular file")
        os.unlink(name, dir_fd=folder)
        return True
    finally:
        os.close(folder)
