"""A script child started ahead of need, so a script does not wait ~25 ms for Python and
``starlark`` to load: the app keeps one spare per event loop once code mode is offered,
and starts the next as soon as one is taken.

A spare has loaded ``starlark`` and waits for its job on its input; it takes on its
limits only with the job (:func:`~tui_agent.codemode.child.harden`). If tui-agent dies
it reads the end of its input and exits; :func:`close` stops it on the way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import os
import sys
import weakref
from pathlib import Path

from tui_agent.config.models import CodeModeSettings

CHILD = Path(__file__).with_name("child.py")
MB = 1 << 20


class _Spare:
    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.limit = 0
        self.starting: asyncio.Task[None] | None = None


_SPARES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Spare] = \
    weakref.WeakKeyDictionary()


def reader_limit(limits: CodeModeSettings) -> int:
    """The longest line the child may send: a call's arguments, or the result and logs."""
    return limits.max_transfer_mb * MB + limits.max_output * 4 + MB


async def spawn(limits: CodeModeSettings) -> asyncio.subprocess.Process:
    """A new child, waiting for its job."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", str(CHILD), _starlark_home(),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, limit=reader_limit(limits), start_new_session=True,
        env=_child_env())


def prepare(limits: CodeModeSettings) -> None:
    """Have a spare ready (started in the background when there is none)."""
    loop = asyncio.get_running_loop()
    spare = _SPARES.setdefault(loop, _Spare())
    if spare.proc is None and spare.starting is None:
        spare.starting = loop.create_task(_start(spare, limits))


async def _start(spare: _Spare, limits: CodeModeSettings) -> None:
    try:
        spare.proc, spare.limit = await spawn(limits), reader_limit(limits)
    except OSError:
        pass  # the script starts its own child, and says why if that fails too
    finally:
        spare.starting = None


async def take(limits: CodeModeSettings) -> asyncio.subprocess.Process | None:
    """The spare child, if there is one for these limits. One still starting is waited
    for: the process already runs (starting a second would cost as long, or longer on a
    busy machine, and leave this one idle beside it)."""
    loop = asyncio.get_running_loop()
    spare = _SPARES.get(loop)
    if spare is None:
        return None
    if spare.starting is not None:
        # wait() leaves the start alone if this script is cancelled meanwhile, and
        # returns if close() cancels it (close() also stops a spare that just started)
        await asyncio.wait({spare.starting})
    if spare.proc is None or _SPARES.get(loop) is not spare:
        return None
    proc, spare.proc = spare.proc, None
    if proc.returncode is not None or spare.limit != reader_limit(limits):
        _kill(proc)
        return None
    return proc


async def close() -> None:
    """Stop this loop's spare, if any."""
    spare = _SPARES.pop(asyncio.get_running_loop(), None)
    if spare is None:
        return
    if spare.starting is not None:
        spare.starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await spare.starting
    if spare.proc is not None:
        _kill(spare.proc)
        with contextlib.suppress(ProcessLookupError):
            await spare.proc.wait()


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _child_env() -> dict[str, str]:
    """A script cannot read its environment, but the child gets none of our secrets
    anyway: only the locale, PATH, our own ``TUI_AGENT_*`` settings, and who its parent
    is (it dies with us)."""
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
    env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("TUI_AGENT_")}
    env["TUI_AGENT_SANDBOX_PARENT"] = str(os.getpid())
    return env


@functools.cache
def _starlark_home() -> str:
    """The directory ``starlark`` is installed in (the child starts without ``site``)."""
    spec = importlib.util.find_spec("starlark")
    origin = spec.origin if spec is not None else None
    if origin is None:
        return ""
    path = Path(origin).parent
    return str(path.parent if path.name == "starlark" else path)
