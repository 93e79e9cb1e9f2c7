"""The built-in shell tools through the real hub: tests/fakes/shell_server.py over stdio,
a project folder and a home with secrets in it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, need, tagged_env
from tests.zygote import module
from tui_agent.config.models import ServerConfig
from tui_agent.tools.hub import Hub


def need_bwrap() -> None:
    from tui_agent.builtin.shell.sandbox import bwrap_problem

    need(shutil.which("bwrap") is not None and bwrap_problem() is None, "bubblewrap (bwrap)")


def shell_server(project: Path, home: Path, direct: bool = False,
                 keep: Sequence[str] = (), **settings: Any) -> ServerConfig:
    """The shell server working in ``project``, with ``home`` as its HOME (and XDG dirs
    under it). ``direct``: a fresh interpreter, not the zygote's fork (whose exit skips
    ``atexit``, which a test of the server's own exit needs). ``keep``: its ``--keep``
    arguments (a checkpoint store, and a bound)."""
    args = ["--cwd", str(project), "--settings", json.dumps(settings), *keep]
    command, *argv = ([sys.executable, "-m", "tests.fakes.shell_server", *args] if direct
                      else module("tests.fakes.shell_server", *args))
    env = tagged_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                     XDG_DATA_HOME=str(home / ".local/share"), PYTHONPATH=str(ROOT),
                     OPENAI_API_KEY="sk-test-secret-key-1234567890")
    return ServerConfig(command=command, args=argv, cwd=str(ROOT), env=env,
                        startup_timeout=60, timeout=60)


@asynccontextmanager
async def shell_hub(server: ServerConfig, tmp_path: Path) -> AsyncIterator[Hub]:
    hub = Hub({"local": server}, log_dir=tmp_path / "logs", default_timeout=60)
    hub.start()
    try:
        await hub.wait_all()
        yield hub
    finally:
        await hub.close()


async def call(hub: Hub, tool: str, **arguments: Any) -> tuple[str, bool]:
    specs = {s.name: s for s in hub.specs()}
    name = f"local__{tool}"
    assert name in specs, f"{name} not in {sorted(specs)}; {hub.statuses()}"
    outcome = await hub.call(specs[name], arguments)
    return outcome.text, outcome.is_error


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1]
    except OSError:
        return False
    return not state.startswith("Z")


def docker_running() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def broken_bwrap(where: Path) -> Path:
    """A folder holding a ``bwrap`` that fails as it does without user namespaces: put
    first in one process's ``PATH`` (a server's), bubblewrap fails there only."""
    where.mkdir(parents=True, exist_ok=True)
    fake = where / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    return where
