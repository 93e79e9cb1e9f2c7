"""The saved conversations as a person chooses among them (``/resume``'s picker): each
with when it was last written, the folder it was started in, how many messages it holds
and its title (the first prompt, on one line, stripped of control characters), newest
first, and which of them belong to the project the app runs in.

Headless: the picker that shows them is the UI's (``ui/resume.py``); finding one file by
id is :mod:`.store`'s.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from tui_agent.config.project import find_project
from tui_agent.core.session.loader import load
from tui_agent.core.session.store import SessionStore

LIMIT = 200
"""The most conversations read for a listing (the newest)."""


@dataclass(frozen=True)
class SessionInfo:
    """One saved conversation, as listed."""

    id: str
    path: Path
    when: datetime
    """When its file was last written (local time)."""
    folder: Path | None
    """The folder it was started in (None: an older file that did not record it)."""
    messages: int
    title: str
    """The first prompt, one line (see ``Conversation.title``)."""
    model: str = ""


def list_sessions(store: SessionStore, secrets: Iterable[str] = (), limit: int = LIMIT
                  ) -> list[SessionInfo]:
    """The newest ``limit`` conversations of ``store``, newest first; a file that cannot
    be read, or that holds nothing but its header, is left out. Reads files: call it off
    the UI's event loop."""
    hidden = frozenset(secrets)
    found = []
    for path in reversed(store.paths()[-limit:]):
        with contextlib.suppress(Exception):  # a file gone or unreadable since listed
            conv = load(path, hidden)
            if not conv.entries:
                continue
            cwd = conv.meta.get("cwd")
            found.append(SessionInfo(
                conv.id, path, datetime.fromtimestamp(path.stat().st_mtime),
                Path(cwd) if isinstance(cwd, str) and cwd else None, len(conv.entries),
                conv.title(200), str(conv.meta.get("model") or "")))
    return found


def project_folder(cwd: Path) -> Path:
    """The folder whose conversations are "this project's": the nearest folder from
    ``cwd`` up holding a project config file (``.tui-agent/``, ``.mcp.json``) or a
    ``.git``, else ``cwd`` itself."""
    cwd = cwd.resolve()
    project = find_project(cwd)
    if project is not None:
        return project.root
    home = Path(os.environ.get("HOME") or Path.home()).resolve()
    for folder in (cwd, *cwd.parents):
        if folder == home:
            break
        if (folder / ".git").exists():
            return folder
    return cwd


def in_folder(info: SessionInfo, folder: Path) -> bool:
    """Whether ``info`` was started in ``folder`` or below it."""
    if info.folder is None:
        return False
    started = info.folder
    return started == folder or folder in started.parents


def split_by_folder(infos: Sequence[SessionInfo], folder: Path
                    ) -> tuple[list[SessionInfo], list[SessionInfo]]:
    """``infos`` started in ``folder`` (or below), and the others; each newest first."""
    here = [i for i in infos if in_folder(i, folder)]
    return here, [i for i in infos if not in_folder(i, folder)]


def when_text(when: datetime, now: datetime | None = None) -> str:
    """``today 14:05``, ``yesterday 09:12``, ``Nov 21 18:40``, or ``2025-11-21`` for
    another year: short, and readable at a glance."""
    now = now or datetime.now()
    if when.date() == now.date():
        return f"today {when:%H:%M}"
    if when.date() == (now - timedelta(days=1)).date():
        return f"yesterday {when:%H:%M}"
    if when.year == now.year:
        return f"{when:%b %d %H:%M}"
    return f"{when:%Y-%m-%d}"


def folder_text(folder: Path | None) -> str:
    """``~/src/app`` for a folder under home; ``?`` when the file did not record one."""
    if folder is None:
        return "?"
    home = Path(os.environ.get("HOME") or Path.home())
    with contextlib.suppress(ValueError):
        return "~/" + str(folder.relative_to(home)) if folder != home else "~"
    return str(folder)
