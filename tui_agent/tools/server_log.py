"""A server's stderr log: one file per server under the state dir (never the terminal,
never an unread pipe), rotated once it passes 1 MB, and its last lines for a report."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TextIO

from tui_agent.tools.text import clean

LOGGED = ("stdio", "docker", "docker-gateway")
"""Transports whose server's stderr goes to a log file."""
LOG_ROTATE_BYTES = 1_000_000
STDERR_TAIL_LINES = 20
STARTING = "--- tui-agent: starting"
"""Opens the lines of each start; the tail is what the server wrote since the last one."""


def log_path(log_dir: Path, server: str, transport: str | None) -> Path | None:
    """Where ``server``'s stderr goes, or None for a transport that has none."""
    return log_dir / f"{_file_safe(server)}.log" if transport in LOGGED else None


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "server"


def open_log(path: Path) -> TextIO:
    """The server's stderr log, rotated once it passes 1 MB."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_ROTATE_BYTES:
            path.replace(path.with_suffix(".log.1"))
    return path.open("a", encoding="utf-8", errors="replace")


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
