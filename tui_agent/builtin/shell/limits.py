"""How many processes one command may have, so a fork bomb stops at a ceiling instead of
filling the machine.

Two mechanisms, because neither works everywhere: ``RLIMIT_NPROC`` (set in the child
before it runs the command) holds for an ordinary user, but the kernel does not apply it
to root; for root, a ``pids`` cgroup (v1 ``/sys/fs/cgroup/pids`` or v2 with the ``pids``
controller) of its own per command, which the child joins before it runs anything. The
cgroup is removed once the command has ended. When neither is possible the command still
ends at its timeout with its whole PID namespace (bwrap) or process group (none)."""

from __future__ import annotations

import contextlib
import itertools
import os
import resource
import signal
from collections.abc import Callable
from pathlib import Path

_V1 = Path("/sys/fs/cgroup/pids")
_V2 = Path("/sys/fs/cgroup")
_count = itertools.count()
_stale: list[Path] = []


class Ceiling:
    """The process ceiling of one command: :meth:`enter` runs in the child between fork
    and exec; :meth:`close` removes the cgroup (if one was made)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.group: Path | None = None
        self.nproc: int | None = None
        if os.geteuid() == 0:
            self.group = _make_group(limit)
        else:
            self.nproc = _user_processes() + limit

    @property
    def how(self) -> str:
        if self.group is not None:
            return f"pids cgroup (pids.max {self.limit})"
        return f"RLIMIT_NPROC {self.nproc}" if self.nproc is not None else "none"

    def enter(self) -> None:
        """In the child, before exec: join the cgroup, or lower RLIMIT_NPROC."""
        if self.group is not None:
            with contextlib.suppress(OSError):
                (self.group / "cgroup.procs").write_text(str(os.getpid()))
        elif self.nproc is not None:
            _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
            value = self.nproc if hard == resource.RLIM_INFINITY else min(self.nproc, hard)
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NPROC, (value, value))

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup (those that left the process group too)."""
        if self.group is not None:
            for pid in _read(self.group / "cgroup.procs").split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)

    def close(self) -> None:
        """Remove the cgroup; one whose processes are still being reaped is removed at a
        later call (the next command's, or the server's exit)."""
        if self.group is not None:
            _stale.append(self.group)
            self.group = None
        sweep()

    def preexec(self) -> Callable[[], None]:
        return self.enter


def sweep() -> None:
    """Remove the cgroups of ended commands that could not be removed yet."""
    for group in list(_stale):
        try:
            group.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            continue
        _stale.remove(group)


def _make_group(limit: int) -> Path | None:
    for base in (_V1, _V2):
        if base == _V2 and "pids" not in _read(base / "cgroup.subtree_control"):
            continue
        if not (base / "cgroup.procs").exists() or not os.access(base, os.W_OK):
            continue
        group = base / f"tui-agent-shell-{os.getpid()}-{next(_count)}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
            continue
        return group
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _user_processes() -> int:
    """Processes of this user now (RLIMIT_NPROC counts them all, not the command's)."""
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += 1
    return count
