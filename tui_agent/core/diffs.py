"""What a tool call would do to a file, for the approval question: a unified diff of the
file as it is against the file as the call would leave it, computed here from the call's
arguments (nothing is asked of the server).

A call writes a file when its tool's name says so (write, edit, create, save, ...) and
its arguments carry a path and either the new content (``content``, ``file_text``,
...) or edits (``edits: [{oldText, newText}]`` as ``server-filesystem`` takes them,
``old_string``/``new_string``, ``old_str``/``new_str``). The path is read as the server
would: relative to the project, or, for a Docker server, through its volumes; a path
outside the server's roots is flagged.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from tui_agent.core.attachments import human_size

WRITES = re.compile(r"write|edit|create|save|put|replace|update|append|patch|modify|insert|"
                    r"overwrite|str_replace", re.IGNORECASE)
PATH_KEYS = ("path", "file_path", "filepath", "file", "filename", "target_file", "target")
CONTENT_KEYS = ("content", "contents", "file_text", "new_content", "text", "data", "body")
EDIT_PAIRS = (("oldText", "newText"), ("old_text", "new_text"), ("old_string", "new_string"),
              ("old_str", "new_str"), ("search", "replace"))
MOST_READ = 2 * 1024 * 1024
"""The largest current file diffed against (a bigger one is named, not read)."""


@dataclass(frozen=True)
class FileScope:
    """Where a server's paths lead on this machine: its roots, the directory a relative
    path starts from, and (for a Docker server) its volumes as (container path, host
    path) pairs."""

    roots: Sequence[Path] = ()
    base: Path | None = None
    mounts: Sequence[tuple[str, Path]] = ()
    elsewhere: str = ""
    """Where the server's files are when not on this machine: ``the container``, ``the
    remote server`` (a path there is read through ``mounts``, if any)."""


@dataclass(frozen=True)
class FileChange:
    """A file a call would write: where, the diff (empty when there is no change), and
    what to warn of."""

    path: str
    """The path as the call names it."""
    local: Path | None
    """The file on this machine (None: only inside a container)."""
    diff: str
    new_file: bool = False
    added: int = 0
    removed: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)
    old: str = field(default="", repr=False)
    """The file's text before the call (empty for a new file): for a front end that draws
    the diff itself (an editor over ACP)."""
    new: str = field(default="", repr=False)
    """The file's text after the call."""

    def summary(self) -> str:
        what = "new file" if self.new_file else f"+{self.added} −{self.removed}"
        return f"{self.path} ({what})"


def change_of(tool: str, arguments: dict[str, Any], scope: FileScope) -> FileChange | None:
    """The change a call of ``tool`` with ``arguments`` would make, or None when the call
    does not write a file (as far as its name and arguments tell)."""
    write = _write(tool, arguments)
    if write is None:
        return None
    path, edits, content = write
    warnings: list[str] = []
    local = locate(path, scope, warnings)
    old, exists = _current(local, path, warnings)
    if edits is not None:
        new = _apply(old, edits, warnings, every=arguments.get("replace_all") is True)
    elif "append" in tool.lower():
        new = old + (content or "")
    else:
        new = content or ""
    return _change(path, local, old, new, exists, warnings)


def writes_file(tool: str, arguments: dict[str, Any]) -> bool:
    """Whether a call of ``tool`` with ``arguments`` writes a file (the rule above)."""
    return _write(tool, arguments) is not None


def _write(tool: str, arguments: dict[str, Any]
           ) -> tuple[str, list[tuple[str, str]] | None, str | None] | None:
    """What a call that writes a file writes: its path, and its edits or its content; None
    when the call writes none (its tool's name does not say it writes, or no path, or
    neither content nor edits)."""
    if not WRITES.search(tool):
        return None
    path, edits, content = _path(arguments), _edits(arguments), _content(arguments)
    if not path or (edits is None and content is None):
        return None
    return path, edits, content


def may_write_files(tool: str, parameters: dict[str, Any]) -> bool:
    """Whether calls of ``tool`` can write a file, judged before any call from its name
    and the parameters it declares: a path, and content or edits. A tool whose name says
    it writes and that declares no parameters may too (its calls are judged each time
    by :func:`writes_file`)."""
    if not WRITES.search(tool):
        return False
    declared = parameters.get("properties")
    names = set(declared) if isinstance(declared, dict) else set()
    if not names:
        return True
    body = CONTENT_KEYS + ("edits",) + tuple(old for old, _ in EDIT_PAIRS)
    return bool(names & set(PATH_KEYS)) and bool(names & set(body))


def _path(arguments: dict[str, Any]) -> str | None:
    return next((arguments[k] for k in PATH_KEYS if isinstance(arguments.get(k), str)), None)


def _content(arguments: dict[str, Any]) -> str | None:
    return next((arguments[k] for k in CONTENT_KEYS if isinstance(arguments.get(k), str)),
                None)


def _edits(arguments: dict[str, Any]) -> list[tuple[str, str]] | None:
    listed = arguments.get("edits")
    if isinstance(listed, list):
        found = [pair for edit in listed if isinstance(edit, dict)
                 and (pair := _pair(edit)) is not None]
        return found if found else None
    pair = _pair(arguments)
    return [pair] if pair is not None else None


def _pair(holder: dict[str, Any]) -> tuple[str, str] | None:
    for old, new in EDIT_PAIRS:
        if isinstance(holder.get(old), str) and isinstance(holder.get(new), str):
            return holder[old], holder[new]
    return None


def locate(path: str, scope: FileScope, warnings: list[str]) -> Path | None:
    """The file on this machine that ``path`` names for the server (symlinks followed),
    noting in ``warnings`` a path outside its roots."""
    local: Path | None
    if scope.elsewhere:
        local = _through_mounts(path, scope)
        if local is None:
            warnings.append(f"the file is in {scope.elsewhere}, not on this machine: the "
                            "diff is against nothing known")
            return None
    else:
        given = Path(os.path.expanduser(path))
        local = given if given.is_absolute() else (scope.base or Path.cwd()) / given
    local = Path(os.path.realpath(local))
    if scope.roots and not any(local.is_relative_to(root) for root in scope.roots):
        warnings.append(f"outside the server's roots ({', '.join(map(str, scope.roots))})")
    return local


def _through_mounts(path: str, scope: FileScope) -> Path | None:
    inside = PurePosixPath(path if path.startswith("/") else f"/{path}")
    best: tuple[int, Path] | None = None
    for target, host in scope.mounts:
        mount = PurePosixPath(target)
        if inside == mount or mount in inside.parents:
            depth = len(mount.parts)
            if best is None or depth > best[0]:
                best = (depth, host / inside.relative_to(mount))
    return best[1] if best else None


def _current(local: Path | None, path: str, warnings: list[str]) -> tuple[str, bool]:
    if local is None:
        return "", False
    try:
        info = local.stat()
    except FileNotFoundError:
        return "", False
    except OSError as exc:
        warnings.append(f"cannot read the current file ({exc.strerror or exc})")
        return "", True
    if not stat.S_ISREG(info.st_mode):
        warnings.append("the path is not a regular file")
        return "", True
    if info.st_size > MOST_READ:
        warnings.append(f"the current file is {human_size(info.st_size)}: it is not read, so "
                        "the diff is against nothing")
        return "", True
    try:
        return local.read_bytes().decode("utf-8"), True
    except UnicodeDecodeError:
        warnings.append("the current file is not text: the diff is against nothing")
    except OSError as exc:
        warnings.append(f"cannot read the current file ({exc.strerror or exc})")
    return "", True


def _apply(old: str, edits: list[tuple[str, str]], warnings: list[str], *,
           every: bool) -> str:
    text = old.replace("\r\n", "\n")
    for number, (before, after) in enumerate(edits, 1):
        before, after = before.replace("\r\n", "\n"), after.replace("\r\n", "\n")
        if before and before in text:
            text = text.replace(before, after, -1 if every else 1)
        else:
            warnings.append(f"edit {number}'s old text is not in the file (the server may "
                            "refuse the call)")
    return text


def _change(path: str, local: Path | None, old: str, new: str, exists: bool,
            warnings: list[str]) -> FileChange:
    name = path.lstrip("/")
    lines = list(difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile="/dev/null" if not exists else f"a/{name}", tofile=f"b/{name}"))
    diff = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    if not lines:
        warnings.append("the call leaves the file as it is")
    return FileChange(path, local, diff, not exists, added, removed, tuple(warnings), old, new)


def file_change(shown: str, local: Path, new: str) -> FileChange:
    """What writing ``new`` whole to ``local`` (named ``shown`` in the diff's headers)
    would change: a new file as additions, an existing one as the diff against it."""
    warnings: list[str] = []
    old, exists = _current(local, shown, warnings)
    return _change(shown, local, old, new, exists, warnings)


Scopes = Callable[[str], FileScope | None]
"""A server's :class:`FileScope` by name (None: an unknown server; no diff is shown)."""
