"""Which sandbox a command runs in, and the command line that puts it there.

``bwrap`` (bubblewrap): the whole file system read-only, a private ``/tmp``, ``/dev`` and
``/proc`` of its own, the workspace's roots bound read-write at their own paths, then the
places secrets live (:data:`HIDDEN`) covered by empty ones, no network unless asked, its
own PID namespace (``--unshare-pid``: when its first process ends every process in it
ends), ``--die-with-parent`` (the server gone, the sandbox goes) and ``--new-session`` (no
``TIOCSTI`` into a terminal). ``none`` is a plain ``sh -c``. ``docker`` runs through
:mod:`tui_agent.builtin.shell.docker_box` instead of a command line.

The choice is made once per server (:func:`choose`): unset, bwrap when it is installed and
passes a self-test here; otherwise commands run unsandboxed, :func:`choose` says so in one
sentence (:attr:`Choice.note`), and the tool tells the gate every command must ask."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from tui_agent.builtin.secrets import HIDDEN
from tui_agent.config import paths
from tui_agent.config.shell_settings import ShellSettings

Kind = Literal["bwrap", "docker", "none"]


class Workspace(Protocol):
    """What the shell needs of the server's workspace (``builtin.workspace.Workspace``
    has it): where commands start, and the folders they may write."""

    @property
    def cwd(self) -> Path: ...

    def roots(self) -> Sequence[Path]: ...


def writable(workspace: Workspace) -> list[Path]:
    """The workspace's roots and its working directory, resolved, without duplicates
    or folders inside another."""
    found = sorted({Path(p).resolve() for p in [workspace.cwd, *workspace.roots()]})
    return [p for p in found if not any(o != p and p.is_relative_to(o) for o in found)]


@dataclass(frozen=True)
class Choice:
    kind: Kind
    note: str | None = None
    """Why commands are not sandboxed although no one chose ``none`` (None: they are, or
    the user chose so)."""


def choose(settings: ShellSettings) -> Choice:
    """The sandbox commands run in (``docker`` is checked at its first command)."""
    if settings.sandbox in ("docker", "none"):
        return Choice(settings.sandbox)
    problem = bwrap_problem()
    if problem is None:
        return Choice("bwrap")
    wanted = "sandbox = \"bwrap\" is set but" if settings.sandbox else "no sandbox:"
    return Choice("none", f"{wanted} {problem}; shell commands run unsandboxed, as you, and "
                          "every one asks first")


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap runs here; else why not, for people."""
    found = shutil.which("bwrap")
    if found is None:
        return ("bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install "
                "bubblewrap)")
    try:
        done = subprocess.run([found, *base_args(network=False), "true"],
                              capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed its self-test ({exc})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap failed its self-test: {said[-1] if said else done.returncode}"
    return None


def base_args(network: bool) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
            "--new-session"]
    return args if network else [*args, "--unshare-net"]


def bwrap_argv(command: str, cwd: Path, roots: Sequence[Path], network: bool,
               env: Mapping[str, str] = os.environ) -> list[str]:
    """The bwrap command line that runs ``sh -c command`` in ``cwd``. Secrets are covered
    after the roots are bound: a project in the home folder still hides ``~/.ssh``."""
    args = [shutil.which("bwrap") or "bwrap", *base_args(network)]
    for root in roots:
        args += ["--bind", str(root), str(root)]
    args += hide(env)
    return [*args, "--chdir", str(cwd), "/bin/sh", "-c", command]


def hide(env: Mapping[str, str]) -> list[str]:
    """bwrap arguments that cover each secret place that exists."""
    home = Path(env.get("HOME") or Path.home())
    places = [home / name for name in HIDDEN]
    places += [paths.config_dir(env), paths.data_dir(env), paths.state_dir(env)]
    args: list[str] = []
    for path in places:
        if path.is_symlink():
            path = path.resolve()
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def plain_argv(command: str) -> list[str]:
    return ["/bin/sh", "-c", command]
