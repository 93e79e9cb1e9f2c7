"""Files that hold what only the user may read: conversations, tool results, the prompt
history, servers' logs. A file is created with mode 0600 (not chmod-ed after, which would
leave a moment when others can open it), one that an older tui-agent left readable by
others is made private when it is next opened, and a directory made here is 0700 (an
existing one, perhaps the user's own, keeps its mode). The session writer
(:mod:`tui_agent.core.session.writer`) and the others open their files through here."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(directory: Path) -> None:
    """Make ``directory`` (and its missing parents) if it is not there; the one made here
    is 0700."""
    if not directory.is_dir():
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=PRIVATE_DIR, exist_ok=True)


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole (an export, a kept tool result): a new file is
    created private, an existing one keeps its mode. Raises OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def open_append(path: Path) -> int:
    """A descriptor that appends to ``path``: created private, made private if it was
    not (its directory made as :func:`private_dir` makes it). Raises OSError."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        os.close(fd)
        raise
    return fd
