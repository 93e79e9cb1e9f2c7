"""The sessions of one ACP connection, held open within a bound: each open session holds
its conversation's file (locked), a hub and the hub's servers, so an editor that opens
sessions all day must not run the process out of file handles.

A session is released (closed: its turn cancelled, its file and servers closed) when the
editor closes it (``session/close``), when the connection ends, and, when more than
:data:`OPEN_SESSIONS` are open, the one used least recently that is not running a turn.
A released session is not forgotten until ``session/close``: the next request that names
it opens it again from its file, with the folder, servers, mode and model it had (one
with nothing said in it yet had its empty file removed; it comes back under its id).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.acp.sessions import CLOSE_WAIT, AcpSession
from tui_agent.core.permissions.modes import Mode

log = logging.getLogger(__name__)

OPEN_SESSIONS = 8
"""Idle sessions kept open at once; the least recently used beyond it are released."""


@dataclass(frozen=True)
class Released:
    """What a released session is opened again with."""

    path: Path
    cwd: Path
    servers: list[Any]
    roots: tuple[Path, ...]
    code_mode: bool
    model: str | None
    blank: bool
    """Nothing was said in it: its file was removed, and a new one takes its id."""
    mode: Mode = "default"
    """Its permission mode."""
    effort: str | None = None
    """Its reasoning level (None: each model's own)."""


Reopen = Callable[[str, Released], Awaitable[AcpSession]]


class Sessions:
    """The open sessions, most recently used last, and the released ones."""

    def __init__(self, reopen: Reopen, limit: int = OPEN_SESSIONS) -> None:
        self.open: OrderedDict[str, AcpSession] = OrderedDict()
        self.released: dict[str, Released] = {}
        self._reopen, self.limit = reopen, limit
        self._reopening = asyncio.Lock()
        """One reopen at a time: two requests naming one released session open it once."""
        self._closing: dict[str, asyncio.Task[None]] = {}
        """The sessions being closed, by id (see :meth:`_close`)."""

    def peek(self, session_id: str) -> AcpSession | None:
        """The session if it is open, without reopening it or counting it as a use."""
        return self.open.get(session_id)

    async def get(self, session_id: str) -> AcpSession | None:
        """The session, opened again if it was released; None if it is not ours."""
        session = self.open.get(session_id)
        if session is not None:
            self.open.move_to_end(session_id)
            return session
        async with self._reopening:
            if session_id in self.open:  # reopened while this request waited
                return self.open[session_id]
            record = self.released.get(session_id)
            if record is None:
                return None
            await self.settled(session_id)  # released just now: its file is unlocked first
            session = await self._reopen(session_id, record)
            del self.released[session_id]
            await self.add(session)
            return session

    async def add(self, session: AcpSession) -> None:
        """Hold ``session`` open (most recently used), releasing the least recently used
        idle ones beyond the limit."""
        self.hold(session)
        await self.trim(session.id)

    def hold(self, session: AcpSession) -> None:
        """Hold ``session`` open (most recently used), over the limit for now: a session
        being opened is counted once it is (:meth:`trim`), so that an open that is
        cancelled has released nothing."""
        self.open[session.id] = session
        self.open.move_to_end(session.id)

    async def trim(self, keep: str) -> None:
        """Release the least recently used idle sessions beyond the limit, never ``keep``
        (the one just opened)."""
        for old_id in list(self.open):
            if len(self.open) <= self.limit:
                break
            old = self.open.get(old_id)
            if old is not None and old_id != keep and (old.turn is None or old.turn.done()):
                await self.release(old_id)

    async def release(self, session_id: str) -> None:
        """Close an open session, remembering how to open it again."""
        session = self.open.pop(session_id)
        writer = session.agent.session
        if writer is not None:
            self.released[session_id] = Released(
                writer.path, session.cwd, session.servers, session.roots, session.code_mode,
                session.models.chosen, writer.blank, session.agent.policy.mode,
                session.models.reasoning_effort)
        await self._close(session)
        log.info("released the idle session %s (over %d open)", session_id, self.limit)

    async def forget(self, session_id: str) -> bool:
        """``session/close``: closed and not opened again; whether it was ours."""
        known = session_id in self.released or session_id in self.open
        self.released.pop(session_id, None)
        session = self.open.pop(session_id, None)
        if session is not None:
            await self._close(session)
        else:
            await self.settled(session_id)
        return known

    async def settled(self, session_id: str) -> None:
        """Wait (at most :data:`CLOSE_WAIT` seconds more than its turn may take) for a
        close of ``session_id`` still at work, one a cancelled request left running:
        opening the session's file again needs its lock."""
        closing = self._closing.get(session_id)
        if closing is not None:
            await asyncio.wait({closing}, timeout=2 * CLOSE_WAIT)

    async def close(self) -> None:
        """The connection ended: every open session is closed."""
        for session_id in list(self.open):
            await self._close(self.open.pop(session_id))
        self.released.clear()
        if self._closing:  # closes a cancelled request left running
            await asyncio.wait(set(self._closing.values()), timeout=2 * CLOSE_WAIT)

    async def _close(self, session: AcpSession) -> None:
        """Close ``session`` in a task of its own, awaited shielded: a request cancelled
        while it closes one (``$/cancel_request``) does not leave it half closed, its file
        still locked and its servers running, so that opening it again would fail."""
        task = asyncio.ensure_future(_closed(session))
        self._closing[session.id] = task
        task.add_done_callback(lambda _: self._closing.pop(session.id, None)
                               if self._closing.get(session.id) is task else None)
        await asyncio.shield(task)


async def _closed(session: AcpSession) -> None:
    try:
        await session.close()  # bounded: its turn by CLOSE_WAIT, its hooks by their timeouts
    except Exception:  # the session is gone from the registry whatever its servers did
        log.warning("closing the session %s failed", session.id, exc_info=True)
