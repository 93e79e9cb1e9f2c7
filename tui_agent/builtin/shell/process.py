"""One command as a running process: started in a session (process group) of its own,
stdout and stderr read together into a :class:`~tui_agent.builtin.shell.output.Capture`,
ended with every process it started.

Killing reaches the whole tree: under bwrap the command's first process is bwrap, whose
PID namespace dies with it (every process inside, however it daemonised); unsandboxed it
is the command's process group (a process that left it with ``setsid`` escapes: that is
what a sandbox is for). The child also gets ``PR_SET_PDEATHSIG``, so a server killed
outright (SIGKILL, a crash) still takes its commands with it."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tui_agent.builtin.shell.limits import Ceiling
from tui_agent.builtin.shell.output import Capture

DRAIN = 0.2
"""Seconds to wait for the last output after the command's first process exited."""
_PR_SET_PDEATHSIG = 1


class Running:
    """A started command; :meth:`start` makes one."""

    def __init__(self, proc: asyncio.subprocess.Process, capture: Capture,
                 ceiling: Ceiling, command: str) -> None:
        self.proc, self.capture, self.ceiling, self.command = proc, capture, ceiling, command
        self.started = time.monotonic()
        self.killed = False
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, argv: Sequence[str], cwd: Path, env: Mapping[str, str],
                    limit: int, max_processes: int, command: str,
                    pass_fds: Sequence[int] = ()) -> Running:
        ceiling = Ceiling(max_processes)

        def in_child() -> None:
            ceiling.enter()
            with contextlib.suppress(Exception):
                ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=str(cwd), env=dict(env), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                start_new_session=True, preexec_fn=in_child, pass_fds=tuple(pass_fds))
        except BaseException:
            ceiling.close()
            raise
        return cls(proc, Capture(limit), ceiling, command)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.capture.feed(chunk)

    async def wait(self, timeout: float | None) -> bool:
        """Wait until the command's first process exits (True) or ``timeout`` passes
        (False). Once it has exited, whatever it left running is ended."""
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            return False
        await self._drain()
        self.end()
        return True

    async def _drain(self) -> None:
        """Let the reader take what is still in the pipe (``asyncio.wait``: it neither
        raises nor cancels), then stop it: a process that escaped may hold the pipe."""
        await asyncio.wait({self._reader}, timeout=DRAIN)
        if not self._reader.done():
            self._reader.cancel()

    def watch(self) -> None:
        """A background command: once it exits, end what it left and free its cgroup."""
        self._watcher = asyncio.get_running_loop().create_task(self.wait(None))

    async def kill(self) -> None:
        """End the command and everything it started, now."""
        self.killed = self.proc.returncode is None
        self.end()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)
        await self._drain()
        self.end()

    def end(self) -> None:
        """SIGKILL to the command's process group (and its cgroup), the cgroup removed
        (synchronous: also used at the server's exit, when the loop may be gone)."""
        for kill in (os.killpg, os.kill):  # plain calls: the loop may be gone at exit
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(self.proc.pid, signal.SIGKILL)
        self.ceiling.kill_all()
        self.ceiling.close()

    def footer(self, timeout: float | None = None) -> str:
        """How the command ended, for the model (empty while it runs)."""
        code = self.proc.returncode
        if timeout is not None:
            return (f"[timed out after {timeout:g} s: the command was killed with every "
                    "process it started]")
        if self.killed:
            return "[killed]"
        if code is None:
            return ""
        if code < 0:
            return f"[ended by signal {signal.Signals(-code).name}]"
        return f"[exit code {code}]" if code else ""
