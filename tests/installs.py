"""What the tests install on first use (npm packages from a lock file), made safe for
parallel runs: pytest-xdist's workers, or a second copy of the suite in the same checkout,
may all ask at once, and ``npm ci`` deletes ``node_modules`` before it writes it. The
first asker installs while holding an exclusive lock on a file beside the package; the
others wait on that lock and then find the package there."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import need


@contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """Hold ``lock`` (a file) exclusively, across processes, for the block."""
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def npm_ci(directory: Path, exe: Path, *, timeout: float) -> Path:
    """``exe`` (under ``directory/node_modules``), running ``npm ci`` in ``directory``
    first when it is missing or was installed from another lock file (a pull that moves a
    pin must not leave the old version in place); one process installs, the others wait
    for it."""
    lock = (directory / "package-lock.json").read_bytes()
    stamp = directory / "node_modules" / ".installed-from-lock"

    def current() -> bool:
        return exe.exists() and stamp.exists() and stamp.read_bytes() == lock

    if current():
        return exe
    npm = shutil.which("npm")
    need(npm is not None and shutil.which("node") is not None, "node and npm")
    assert npm is not None
    with exclusive(directory / "node_modules.lock"):
        if not current():  # another process may have installed it while we waited
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=directory,
                                  capture_output=True, text=True, timeout=timeout)
            need(done.returncode == 0 and exe.exists(),
                 f"npm ci in {directory} (it said: {done.stderr.strip()[-500:]})")
            stamp.write_bytes(lock)
    return exe
