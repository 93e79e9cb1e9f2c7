"""One hook command as a process, as Claude Code runs it: ``/bin/sh -c COMMAND`` in its own
process group, the event's JSON on stdin, stdout and stderr read (each up to
:data:`CAP` bytes; the rest is read and dropped, so a hook printing without end neither
hangs nor fills memory), and at its timeout the whole group killed. Never raises for the
hook's own failures: they come back in :class:`Ran` for
:mod:`tui_agent.core.hooks.answers` to read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CAP = 1 << 20
"""Bytes of each stream kept (1 MB)."""
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Ran:
    """How one hook run ended."""

    command: str
    code: int | None
    """The exit status (negative: killed by that signal); None when it did not run or
    was killed at its timeout."""
    stdout: str = ""
    stderr: str = ""
    problem: str = ""
    """Why there is no exit status: ``timed out after 30 s``, ``could not start: ...``."""
    cut: bool = False
    """A stream was longer than :data:`CAP` and was cut."""


async def run_hook(command: str, stdin: bytes, *, cwd: Path, env: Mapping[str, str],
                   timeout: float, cap: int = CAP) -> Ran:
    """Run ``command`` with ``stdin``; stopping the caller (cancellation) kills it too."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=cwd, env=dict(env), start_new_session=True)
    except OSError as exc:
        return Ran(command, None, problem=f"could not start: {exc.strerror or exc}")
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out, err = _Capped(cap), _Capped(cap)
    try:
        async with asyncio.timeout(timeout):
            await asyncio.gather(_feed(proc.stdin, stdin), out.drain(proc.stdout),
                                 err.drain(proc.stderr), proc.wait())
    except TimeoutError:
        _kill_group(proc.pid)
        await _reap(proc)
        return Ran(command, None, out.text(), err.text(),
                   problem=f"timed out after {timeout:g} s (killed)", cut=out.cut or err.cut)
    finally:
        if proc.returncode is None:  # cancelled: the hook must not outlive the turn
            _kill_group(proc.pid)
            await asyncio.shield(_reap(proc))
    return Ran(command, proc.returncode, out.text(), err.text(), cut=out.cut or err.cut)


class _Capped:
    """A stream read to its end, its first ``cap`` bytes kept."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.cut = False

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            room = self.cap - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            if len(chunk) > room:
                self.cut = True

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    """Write the input; a hook that exits without reading it is not an error."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.close()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        async with asyncio.timeout(5):
            await proc.wait()
