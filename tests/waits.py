"""Bounded waits for child processes: no test may wait for a process without a deadline
(a child that ignores the signal meant to end it would hang the suite). On the deadline
the child is killed, reaped, and the test fails saying what it waited for."""

from __future__ import annotations

import contextlib
import os
import signal
import time

POLL = 0.02


def wait_pid(pid: int, timeout: float = 60, what: str = "the process to end") -> int:
    """``os.waitpid(pid, 0)``'s status, waited for at most ``timeout`` seconds; on the
    deadline ``pid`` is killed (SIGKILL) and reaped, and the test fails."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            kill_pid(pid)
            raise AssertionError(f"waited {timeout:g}s for {what} (pid {pid}); killed it")
        time.sleep(POLL)


def kill_pid(pid: int, timeout: float = 30) -> None:
    """SIGKILL ``pid`` (a child of ours) and reap it, waiting at most ``timeout`` seconds
    (a process in uninterruptible sleep can outlive SIGKILL for a while); one already
    reaped is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(pid, os.WNOHANG) == (0, 0) and time.monotonic() < deadline:
            time.sleep(POLL)
