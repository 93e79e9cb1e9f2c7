"""Ctrl-C in the commands that start servers and print (``servers``, ``stubs``, ``login``,
``mcp add``): it stops the command at once and ends every server it started.

Python's own Ctrl-C raises ``KeyboardInterrupt`` wherever the main thread happens to be,
which in an event loop can be inside any task's step: in the middle of a server's start,
inside the SDK's shielded close, in an anyio task group. From there the loop is torn
down by ``asyncio.run``'s "cancel what is left and wait for it", which waits on tasks in
states nobody planned for, each server's close taking the SDK's polite seconds. A person
saw one Ctrl-C during ``mcp add`` do nothing for 45 s and the second leave the server's
``sh`` and ``node`` running (not reproduced here; this takes away the ground it needs).
Here Ctrl-C is the loop's signal
instead: it hurries every server's close (:mod:`tui_agent.tools.transports.stopping`:
its process group is ended within about a second, whatever it does with its input or
SIGTERM) and cancels the command at its next ``await``, so its own ``finally`` closes
the hub as it always does; then ``KeyboardInterrupt`` is raised, which the command line
turns into "interrupted" and exit 130. A second Ctrl-C kills what is being closed
(:func:`~tui_agent.tools.transports.stopping.end_now`) and raises it at once.
``run`` has its own handling (:mod:`.run`), and the chat app Textual's.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from tui_agent.tools.transports import stopping

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where Ctrl-C cancels ``main`` (hurrying the servers' close)
    and then raises ``KeyboardInterrupt``. Off the main thread (a test calling a command
    from a worker thread) no signal can be taken: plain ``asyncio.run``."""
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(main)
    interrupted: list[bool] = []
    before = signal.getsignal(signal.SIGINT)
    try:
        return asyncio.run(_guarded(main, interrupted))
    except asyncio.CancelledError:
        if not interrupted:
            raise
        raise KeyboardInterrupt from None
    finally:
        if before is not None:  # None: not set from Python (then there is nothing to restore)
            signal.signal(signal.SIGINT, before)


async def _guarded(main: Coroutine[Any, Any, T], interrupted: list[bool]) -> T:
    loop = asyncio.get_running_loop()
    task = loop.create_task(main, name="command")

    def stop() -> None:
        if interrupted:  # a second Ctrl-C: no more waiting for the close
            stopping.end_now()
            raise KeyboardInterrupt
        interrupted.append(True)
        stopping.hurry()
        task.cancel()

    loop.add_signal_handler(signal.SIGINT, stop)
    try:
        result = await task
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    if interrupted:  # the command ended on its own meanwhile: still an interrupted one
        raise asyncio.CancelledError
    return result
