"""``/rewind [N] [files]`` over ACP: the conversation taken back to just before the
person's N-th last message (default 1, the last), with the same core as the app's
``/rewind`` (:mod:`tui_agent.core.rewind`, :func:`~tui_agent.core.session.branch.branch`);
with ``files``, the files the built-in tools changed since then are put back too (an
editor has no second picker to ask in, so the word asks for it; without it files stay as
they are, and the answer names them).

The editor keeps its session id, and ``session/load`` of that id must find what it goes
on with: so the conversation as it was is moved to a new id (named in the answer, and
``/resume`` in the app finds it) and the branch takes the session's file. The editor
still shows the later messages (ACP cannot take them back); the model no longer sees
them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.builtin.checkpoints import Restored
from tui_agent.core.rewind import file_lines, folder_of, plan, quoted, restore, roots_of
from tui_agent.core.session import Conversation, SessionError, load
from tui_agent.core.session.branch import branch, user_points
from tui_agent.tools.metrics import metrics_path
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted
from tui_agent.wiring import build

if TYPE_CHECKING:
    from tui_agent.acp.sessions import AcpSession
    from tui_agent.core.rewind import Plan

USAGE = "/rewind [N] [files]"


class Refused(ValueError):
    """``/rewind`` cannot do what it was asked (the words say why); nothing was done."""


@dataclass(frozen=True)
class Done:
    kept: str
    new: Conversation
    found: Plan
    restored: Restored | None
    folder: str | None


def words(rest: str) -> tuple[int, bool]:
    """``(N, files)`` from what follows ``/rewind``."""
    count, files = 1, False
    for word in rest.split():
        if word.lower() == "files":
            files = True
        elif word.isdigit() and int(word) >= 1:
            count = int(word)
        else:
            raise Refused(f"{USAGE}: N is a count of your messages back from the last "
                          f"(1, 2, ...) and files restores the files too; not {word!r}")
    return count, files


async def run(session: AcpSession, rest: str) -> str:
    """Do ``/rewind`` in ``session`` (no turn runs: a prompt waits for the last to end);
    the answer for the person."""
    try:
        count, files = words(rest)
        writer = session.agent.session
        if writer is None or writer.blank:
            raise Refused("nothing to rewind yet: no message sent in this conversation")
        done = await asyncio.to_thread(_rewind, session, count, files)
    except Refused as exc:
        return f"⚠ {exc}"
    except (SessionError, OSError) as exc:
        return (f"⚠ /rewind failed, the conversation goes on as it was and no file was "
                f"changed: {clean(str(exc))}")
    _continue(session, done.new)
    text = quoted(done.found.point.text)
    return "\n".join([
        f"Rewound to before your message “{text}”: the conversation goes on from there "
        f"({counted(len(done.new.entries), 'message')}); as it was before, it is kept as "
        f"{done.kept}. The later messages still shown here are no longer seen by the model.",
        *file_lines(done.found, done.restored, done.folder, names=True)])


def _rewind(session: AcpSession, count: int, files: bool) -> Done:
    """The branch made in the session's file, the old conversation moved to a new id,
    then the files restored (if asked: after the branch, so a branch that fails leaves
    them as they are). In a thread."""
    writer = session.agent.session
    assert writer is not None
    secrets = session.settings.secrets
    writer.sync()
    conv = load(writer.path, secrets)
    points = user_points(conv)
    if count > len(points):
        raise Refused(f"/rewind {count}: this conversation has "
                      f"{counted(len(points), 'message')} of yours")
    point = points[-count]
    found = plan(conv, point)
    sessions, place = build.sessions(), writer.path
    kept = sessions.new_path()
    writer.close()
    _move(place, kept)
    try:
        new = branch(load(kept, secrets), point.index, sessions, secrets, path=place)
    except BaseException:
        with contextlib.suppress(OSError):
            place.unlink()  # a branch begun and not finished
        _move(kept, place)
        session.agent.session = build.resumed_session(session.settings, load(place, secrets))
        raise
    restored = None
    if files:
        roots = roots_of(conv, [session.cwd, *session.folders()])
        restored = restore(found, roots, new)
    return Done(kept.stem, new, found, restored, folder_of(conv))


def _move(source: Path, target: Path) -> None:
    """A session file (and its metrics beside it) to another name."""
    if target.exists():
        raise OSError(f"{target} is already there")
    os.rename(source, target)
    if metrics_path(source).exists():
        os.rename(metrics_path(source), metrics_path(target))


def _continue(session: AcpSession, new: Conversation) -> None:
    """The session's agent goes on with ``new`` (written to its file), keeping its model,
    gate, tools, skills and code mode."""
    old = session.agent
    agent = build.agent(session.settings, old.llm, old.gate, old.policy, tools=old.tools,
                        session=build.resumed_session(session.settings, new), history=new,
                        skills=old.skills, cwd=session.cwd)
    agent.code_mode, agent.scopes, agent.usage = old.code_mode, old.scopes, new.usage
    agent.subagents = old.subagents.fresh()
    session.agent = agent
