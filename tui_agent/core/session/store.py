"""The directory of session files: finding one by id, prefix or path, and the latest
(never a demo conversation, nor one nobody said anything in)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from tui_agent.core.session.records import SessionError, new_id


def is_demo(path: Path) -> bool:
    """Whether the session file at ``path`` is marked as the demo's (in its first line,
    the ``meta`` record)."""
    try:
        with path.open("rb") as file:
            first = file.readline(1 << 16)
        meta = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("kind") == "meta" and meta.get("demo") is True


def said_anything(path: Path) -> bool:
    """Whether the session file at ``path`` holds more than its ``meta`` record (a file
    with nothing else is what a run killed before its first message leaves)."""
    try:
        with path.open("rb") as file:
            file.readline(1 << 16)
            return bool(file.readline(1).strip())
    except OSError:
        return False


class SessionStore:
    """The directory of session files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def new_path(self) -> Path:
        return self.directory / f"{new_id()}.jsonl"

    def paths(self) -> list[Path]:
        """The session files, oldest first (last written); one removed while they are
        listed is left out."""
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.glob("*.jsonl"):
            with contextlib.suppress(FileNotFoundError):
                found.append((path.stat().st_mtime, path.name, path))
        return [path for _, _, path in sorted(found)]

    def latest(self) -> Path | None:
        """The conversation written to last, but never a demo one (``-c`` after ``--demo``
        goes on with the conversation before it, not the tour, with a real model) nor one
        nobody said anything in."""
        return next((p for p in reversed(self.paths())
                     if not is_demo(p) and said_anything(p)), None)

    def find(self, ref: str | None) -> Path:
        """A session by id, unique id prefix, or file path; the latest (not a demo one)
        when ``ref`` is None."""
        if ref is None:
            latest = self.latest()
            if latest is None and self.paths():
                raise SessionError(f"there is no conversation to resume in {self.directory} "
                                   "but the demo's: resume one of those by its id "
                                   "(tui-agent sessions lists them)")
            if latest is None:
                raise SessionError(f"there is no session to resume yet (in {self.directory})")
            return latest
        as_path = Path(ref).expanduser()
        if as_path.suffix == ".jsonl" and as_path.exists():
            return as_path
        matches = [p for p in self.paths() if p.stem.startswith(ref)]
        exact = [p for p in matches if p.stem == ref]
        if exact or len(matches) == 1:
            return (exact or matches)[0]
        if not matches:
            raise SessionError(f"no session '{ref}' in {self.directory} "
                               "(tui-agent sessions lists them)")
        names = ", ".join(p.stem for p in matches[:5])
        raise SessionError(f"'{ref}' matches {len(matches)} sessions ({names}); give more of it")
