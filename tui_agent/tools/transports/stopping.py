"""Stopping a stdio server when nobody is waiting for it: the terminal went away, or the
person pressed Ctrl-C.

The SDK stops a stdio server politely: its stdin closes, it gets 2 s to exit, then its
process group gets SIGTERM, and SIGKILL once the group has not vanished 2 s later. Two
things stretch that past the 2 s the app has to end in when its terminal is gone. A
server that does not exit at the end of its input (server-everything with one of its
timers running keeps its event loop alive) takes the whole first wait. And a group
vanishes only once every member is *reaped*: a grandchild orphaned by its parent's death
(the ``node`` that ``npx`` started through ``sh``) is reaped by PID 1, which on some
machines does so only every two seconds or so, so the second wait runs out on a zombie.

Once :func:`hurry` was called (the app's terminal went away, or a command was stopped by
Ctrl-C: :mod:`tui_agent.headless.stoppable`), each stdio server that is being closed
gets :data:`GRACE` seconds after the end of its input, then SIGTERM to its
process group, then, :data:`KILL_AFTER` seconds later, SIGKILL to whatever of the group
still runs; a zombie counts as gone. The SDK's own close then finds its process exited
and returns. :func:`watch` starts this beside a close; :func:`finish` ends it;
:func:`end_now` kills at once every group running or being closed (a second Ctrl-C;
:func:`started` and :func:`ended` keep the running ones). The rest of
the way out (the turn, the session, the hub) is the caller's; the transport that uses
this is :mod:`.sdk`.

:func:`cannot_watch` is the fallback for a server whose pid could not be learnt (the SDK
changed): once hurried, the SDK's own two waits (``PROCESS_TERMINATION_TIMEOUT`` and
``FORCE_KILL_TIMEOUT`` of ``mcp.client.stdio``, read each time a wait begins) get the same
figures. It is only the fallback because it does less: a close that is already waiting
(the quit key, then the terminal goes) keeps the deadline it began with, up to 2 s more,
and a zombie keeps the SDK's own look at the group alive to the end of its wait. Measured
against the watcher: the npx server closed in 1.5 s against 1.0, a close under way in 2.5
to 2.7 s against 1.0 to 1.1; with both at once the npx server took 1.5 to 1.7 s (the
SDK's zombie-blind wait runs after the watcher's SIGTERM), so the watcher alone is used
where it can be.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time

GRACE = 0.5
"""Seconds a server gets to exit at the end of its input once the app is in a hurry."""
KILL_AFTER = 0.5
"""Seconds between SIGTERM and SIGKILL once the app is in a hurry."""
POLL = 0.02
"""Seconds between two looks at whether a process group still runs."""

log = logging.getLogger("mcp.client.stdio")
"""The SDK's logger for its stdio client, which the hub routes to ``mcp-client.log``:
a server that outlives the end of its input is noted there beside the SDK's own words."""

_hurried = False
_blind = False
"""A server's pid could not be learnt: the SDK's own waits are shortened instead."""
_waiting: set[asyncio.Event] = set()
_closing: set[int] = set()
"""The process groups of the stdio servers being closed now."""
_running: set[int] = set()
"""The process groups of the stdio servers started and not yet closed: with
:data:`_closing`, what :func:`end_now` ends (a second Ctrl-C may come before a close
began)."""


def started(pgid: int | None) -> None:
    """A stdio server's process group is up (until :func:`ended`)."""
    if pgid is not None:
        _running.add(pgid)


def ended(pgid: int | None) -> None:
    if pgid is not None:
        _running.discard(pgid)


def hurry() -> None:
    """From now on (for the rest of the process), servers are stopped without the
    polite waits. Call it from the event loop's thread."""
    global _hurried
    _hurried = True
    if _blind:
        _shorten_sdk_waits()
    for event in list(_waiting):
        event.set()


def cannot_watch() -> None:
    """A stdio server's pid is unknown, so :func:`watch` cannot stop it: once hurried, the
    SDK's own waits are shortened instead (for every server: they are its module's)."""
    global _blind
    _blind = True
    if _hurried:
        _shorten_sdk_waits()


def _shorten_sdk_waits() -> None:
    stdio = sys.modules.get("mcp.client.stdio")  # imported by whoever started the server
    if stdio is not None:
        vars(stdio).update(PROCESS_TERMINATION_TIMEOUT=GRACE, FORCE_KILL_TIMEOUT=KILL_AFTER)


def hurried() -> bool:
    return _hurried


def watch(pgid: int | None) -> asyncio.Task[None] | None:
    """Beside the close of the server whose process group is ``pgid`` (the SDK starts each
    server as a group leader): stop it quickly if :func:`hurry` is called meanwhile."""
    if pgid is None or not hasattr(os, "killpg"):
        return None
    _closing.add(pgid)
    return asyncio.get_running_loop().create_task(_hasten(pgid, time.monotonic()),
                                                  name=f"stop-group:{pgid}")


async def finish(watcher: asyncio.Task[None] | None, pgid: int | None) -> None:
    """After the SDK's close returned: in a hurry, what is left of the group is stopped
    (waited for, within ``GRACE + KILL_AFTER``); otherwise the watcher just ends."""
    if watcher is None:
        return
    try:
        if not (_hurried and pgid is not None and group_runs(pgid)):
            watcher.cancel()
            return
        await asyncio.shield(watcher)  # a cancelled close leaves it to end the group alone
    finally:
        if pgid is not None:
            _closing.discard(pgid)


def end_now() -> None:
    """SIGKILL to the process group of every stdio server running or being closed: the
    person asked twice (a second Ctrl-C), and the process is about to leave without
    waiting for the closes, which would otherwise leave what a server started (``npx``'s
    ``node``) running with no parent. (One still being spawned is not known yet.)"""
    for pgid in list(_closing | _running):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


async def _hasten(pgid: int, began: float) -> None:
    if not _hurried:
        event = asyncio.Event()
        _waiting.add(event)
        try:
            await event.wait()
        finally:
            _waiting.discard(event)
    await asyncio.sleep(max(0.0, began + GRACE - time.monotonic()))
    if not group_runs(pgid):
        return
    _signal(pgid, signal.SIGTERM, began)
    deadline = time.monotonic() + KILL_AFTER
    while time.monotonic() < deadline:
        await asyncio.sleep(POLL)
        if not group_runs(pgid):
            return
    _signal(pgid, signal.SIGKILL, began)


def _signal(pgid: int, signum: int, began: float) -> None:
    """Send ``signum`` to the group, and say so in the log: the server did not end at the
    end of its input (worth knowing of a server), and the log line is how a test tells
    this hurried stop from the SDK's polite one, which no clock on a busy machine can."""
    log.warning("stdio server's process group %d still ran %.2f s after its input was "
                "closed (the app is closing in a hurry): %s", pgid, time.monotonic() - began,
                signal.Signals(signum).name)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def group_runs(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs. On Linux a zombie does not count
    (it has exited; only its reaping, maybe by a slow PID 1, is missing); elsewhere any
    member does."""
    if not sys.platform.startswith("linux"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False
