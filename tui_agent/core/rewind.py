"""``/rewind``: a conversation taken back to just before one of its user messages, as a
new branch (:func:`~tui_agent.core.session.branch.branch`), and, if the user chooses, the
files the built-in tools changed since then put back from their checkpoints
(:mod:`tui_agent.builtin.checkpoints`). Files that other servers' tools wrote since then
(their calls' names and arguments say so: :func:`~tui_agent.core.diffs.writes_file`) are
listed as not restorable.

Which changes are this conversation's, exactly: each tool call sends the built-in server
the session's id and how many of its messages came before the call (:func:`call_meta`, in
the call's ``_meta``), and the server tags every journal line with them. Rewinding to the
message at index ``i`` takes the session's lines whose count is over ``i``, and, for a
branch, its ancestors' lines from between ``i`` and where it branched off
(:func:`lineage`), from every store the session's changes were noted in (a conversation
resumed from another folder finds them) and the store of the folder it was started in.
No clock is compared, and another conversation's changes in the same folder are never
touched. A journal line without a tag (written before tags were kept) is taken as before,
by the time of the message, and the plan says so.

The files go back only inside the conversation's folders and never through a symbolic
link (:mod:`tui_agent.builtin.checkpoints.putting`). The front ends branch first and
restore after, so a failed branch leaves the files as they are; a restore that fails
after it names each file that did not come back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.builtin.checkpoints import Checkpoints, Restored, store_for
from tui_agent.builtin.checkpoints.caller import KEY, Caller, safe_id, stores_of
from tui_agent.builtin.checkpoints.journal import Line
from tui_agent.config import paths
from tui_agent.config.builtin_server import BUILTIN
from tui_agent.core.diffs import PATH_KEYS, writes_file
from tui_agent.core.session.branch import UserPoint
from tui_agent.core.session.records import Conversation
from tui_agent.core.session.writer import SessionWriter

TEXT_WIDTH = 70
"""The most characters of a message a front end quotes."""
UNTAGGED = ("some changes were kept before checkpoints named their conversation: they "
            "are taken by the time of the message, and may include another "
            "conversation's in the same folder")


@dataclass(frozen=True)
class Plan:
    """What rewinding to ``point`` would do to files: ``restorable`` (the built-in tools
    changed them since), ``elsewhere`` (other servers' tools wrote them since: named as
    their calls named them, with the server); ``changes``: the journal lines to put back,
    by store; ``note``: said of the whole (lines without a conversation's tag)."""

    point: UserPoint
    restorable: list[str] = field(default_factory=list)
    elsewhere: list[tuple[str, str]] = field(default_factory=list)
    changes: list[tuple[Checkpoints, list[Line]]] = field(default_factory=list)
    note: str = ""


def call_meta(session: SessionWriter | None) -> dict[str, Any] | None:
    """The ``_meta`` a tool call of the conversation ``session`` writes carries: its id
    and how many of its messages came before the call (None: no session)."""
    if session is None:
        return None
    return {KEY: {"session": session.id, "turn": session.next_seq()}}


def folder_of(conv: Conversation) -> str | None:
    """The folder ``conv`` was started in, as its session says (None: not said)."""
    cwd = conv.meta.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def quoted(text: str, width: int = TEXT_WIDTH) -> str:
    """``text`` cut to ``width`` characters, with an ellipsis when cut."""
    return text if len(text) <= width else text[:width - 1] + "…"


def roots_of(conv: Conversation, extra: Iterable[str | Path] = ()) -> list[str]:
    """The folders files may be put back in: where ``conv`` was started and ``extra``
    (the front end's project and added folders)."""
    found = [folder_of(conv) or os.getcwd(), *(os.path.expanduser(f) for f in extra)]
    return list(dict.fromkeys(os.path.realpath(f) for f in found))


def lineage(conv: Conversation) -> list[tuple[set[str], int | None]]:
    """Whose tagged lines are ``conv``'s: its own ids (any count), then each branch it
    came from with the count of messages it took from there (a line of that session with
    a count up to it was made before the branch point)."""
    own = {conv.id}
    said = conv.meta.get("id")
    if isinstance(said, str):  # a file moved to a new name (ACP /rewind) keeps its tag
        own.add(said)
    out: list[tuple[set[str], int | None]] = [(own, None)]
    for step in conv.meta.get("lineage") or ():
        if (isinstance(step, dict) and isinstance(step.get("id"), str)
                and isinstance(step.get("before"), int)):
            out.append(({step["id"]}, step["before"]))
    return out


def _ours(line: Line, since: int, kin: list[tuple[set[str], int | None]]) -> bool:
    return line.turn > since and any(
        line.session in ids and (before is None or line.turn <= before) for ids, before in kin)


def stores(conv: Conversation) -> list[Checkpoints]:
    """Every store ``conv``'s lineage noted changes in, and its folder's."""
    root = paths.data_dir() / "checkpoints"
    found = [store_for(Path(folder_of(conv) or os.getcwd()))]
    for ids, _ in lineage(conv):
        found += [s for session in ids if safe_id(session) for s in stores_of(root, session)]
    return [Checkpoints(d) for d in dict.fromkeys(found)]


def plan(conv: Conversation, point: UserPoint) -> Plan:
    """What rewinding ``conv`` to just before ``point`` would do to files. Reads the
    journals: call it off the UI's event loop."""
    kin, changes, untagged = lineage(conv), [], False
    for number, store in enumerate(stores(conv)):
        picked = []
        for line in store.lines():
            if line.session:
                if _ours(line, point.index, kin):
                    picked.append(line)
            elif number == 0 and point.at is not None and line.at >= point.at:
                picked.append(line)  # an older journal: by time, in the folder's store
                untagged = True
        if picked:
            changes.append((store, picked))
    seen = dict.fromkeys(line.path for _, picked in changes for line in picked)
    return Plan(point, list(seen), list(written_elsewhere(conv, point.index)), changes,
                UNTAGGED if untagged else "")


def restore(found: Plan, roots: Sequence[str], branch: Conversation | None = None
            ) -> Restored:
    """Put the files of ``found`` back as they were before its message, inside
    ``roots`` (:func:`roots_of`); what is there now is kept first, tagged as ``branch``'s
    (the conversation the rewind made), so the restore can be undone in turn."""
    caller = Caller(branch.id, found.point.index) if branch is not None else None
    done = Restored()
    for store, lines in found.changes:
        try:
            part = store.put_back(lines, roots, caller)
            if (kept := store.lines()) and min(ln.seq for ln in lines) < kept[0].seq:
                part.note = store.dropped()
        except OSError as exc:  # the store itself: none of its files came back
            why = f"its checkpoint store could not be used: {exc.strerror or exc}"
            part = Restored(failed=[(p, why) for p in dict.fromkeys(ln.path for ln in lines)])
        done.restored += part.restored
        done.removed += part.removed
        done.failed += part.failed
        done.note = done.note or part.note
    done.note = "; ".join(n for n in (done.note, found.note) if n)
    return done


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
    if restored is None and found.note:
        lines.append(found.note)
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
