"""``/rewind``: a conversation taken back to just before one of its user messages, as a
new branch (:func:`~tui_agent.core.session.branch.branch`), and, if the user chooses, the
files the built-in tools changed since then put back from their checkpoints
(:mod:`tui_agent.builtin.checkpoints`). Files that other servers' tools wrote since then
(their calls' names and arguments say so: :func:`~tui_agent.core.diffs.writes_file`) are
listed as not restorable.

The checkpoints are found by the folder the conversation was started in (its ``meta``
``cwd``: the built-in server runs there) and the time its message was sent, so this
works the same on a resumed conversation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.builtin.checkpoints import Checkpoints, Restored, store_for
from tui_agent.core.diffs import PATH_KEYS, writes_file
from tui_agent.core.session.branch import UserPoint
from tui_agent.core.session.records import Conversation

BUILTIN = "local"
"""The built-in server's name: its tools' changes are the ones kept."""


@dataclass(frozen=True)
class Plan:
    """What rewinding to ``point`` would do to files: ``restorable`` (the built-in tools
    changed them since), ``elsewhere`` (other servers' tools wrote them since: named as
    their calls named them, with the server)."""

    point: UserPoint
    since: int
    restorable: list[str] = field(default_factory=list)
    elsewhere: list[tuple[str, str]] = field(default_factory=list)


def checkpoints_of(conv: Conversation) -> Checkpoints:
    """The checkpoint store of the folder ``conv`` was started in."""
    cwd = conv.meta.get("cwd")
    return Checkpoints(store_for(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd()))


def plan(conv: Conversation, point: UserPoint, store: Checkpoints) -> Plan:
    """What rewinding ``conv`` to just before ``point`` would do to files. Reads the
    journal: call it off the UI's event loop."""
    since = store.position() if point.at is None else store.position_at(point.at)
    seen: dict[str, None] = {}
    for line in store.lines():
        if line.seq >= since:
            seen.setdefault(line.path)
    return Plan(point, since, list(seen), list(written_elsewhere(conv, point.index)))


def restore(store: Checkpoints, plan: Plan) -> Restored:
    """Put the files of ``plan`` back as they were before its message."""
    return store.restore(plan.since)


def written_elsewhere(conv: Conversation, index: int) -> Iterator[tuple[str, str]]:
    """(path, server) for each file a tool of a server other than the built-in one wrote
    after message ``index`` (a script's calls too), once each."""
    seen: set[tuple[str, str]] = set()
    for server, tool, arguments in _calls(conv, index):
        if server == BUILTIN or not writes_file(tool, arguments):
            continue
        path = next((arguments[k] for k in PATH_KEYS if isinstance(arguments.get(k), str)), "")
        if path and (path, server) not in seen:
            seen.add((path, server))
            yield path, server


def _calls(conv: Conversation, index: int) -> Iterable[tuple[str, str, dict[str, Any]]]:
    for entry in conv.entries[index:]:
        for call in entry.message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            server, _, tool = str(function.get("name", "")).partition("__")
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                continue
            if tool and isinstance(arguments, dict):
                yield server, tool, arguments
        nested = list(entry.call.calls) if entry.call is not None else []
        while nested:
            saved = nested.pop()
            nested.extend(saved.calls)
            yield saved.server or "", saved.tool, saved.arguments


def shown(path: str, folder: str | None) -> str:
    """``path`` relative to ``folder`` when inside it (how a person named it)."""
    if folder:
        try:
            return os.path.relpath(path, folder) if Path(path).is_relative_to(folder) else path
        except ValueError:
            return path
    return path


def file_lines(found: Plan, restored: Restored | None, folder: str | None, *,
               names: bool = False) -> list[str]:
    """What a rewind did to files, a line each (cleaned: paths may hold anything): those
    restored and those that could not be, those left as they were (``names``: named,
    where no picker showed them), those other servers wrote (``/rewind`` in the app and
    over ACP)."""
    from tui_agent.tools.text import clean
    from tui_agent.tools.wording import counted

    def name(path: str) -> str:
        return clean(shown(path, folder))

    lines = []
    if restored is not None:
        back = restored.restored + restored.removed
        if back:
            lines.append(f"restored {counted(len(back), 'file')}: "
                         + ", ".join(map(name, back)))
        lines += [f"not restored: {name(p)} ({clean(why)})" for p, why in restored.failed]
        if restored.note:
            lines.append(restored.note)
    elif found.restorable:
        left = f"files left as they are: {counted(len(found.restorable), 'file')}"
        lines.append(left + (" (" + ", ".join(map(name, found.restorable)) + ")"
                             if names else ""))
    lines += [f"not restorable: {clean(p)} (written by {clean(server)}'s tools)"
              for p, server in found.elsewhere]
    return lines
