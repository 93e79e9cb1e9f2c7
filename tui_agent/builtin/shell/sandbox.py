"""Which sandbox a command runs in, and the command line that puts it there.

``bwrap`` (bubblewrap): the whole file system read-only, a private ``/tmp``, ``/run``,
``/dev`` and ``/proc`` of its own, the workspace's roots bound read-write at their own
paths (their ``.git`` read-only), then the places secrets live
(:mod:`~tui_agent.builtin.shell.private`, :data:`HIDDEN`) covered by empty ones, no Unix
sockets (:mod:`~tui_agent.builtin.shell.seccomp`), no network unless asked, a user
namespace without capabilities where bwrap allows one (:data:`ISOLATION`), its own PID
namespace (``--unshare-pid``: when its first process ends every process in it
ends), ``--die-with-parent`` (the server gone, the sandbox goes) and ``--new-session`` (no
``TIOCSTI`` into a terminal). ``none`` is a plain ``sh -c``. ``docker`` runs through
:mod:`tui_agent.builtin.shell.docker_box` instead of a command line.

The choice is made once per server (:func:`choose`): unset, bwrap when it is installed and
passes a self-test here; otherwise commands run unsandboxed, :func:`choose` says so in one
sentence (:attr:`Choice.note`), and the tool tells the gate every command must ask."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from tui_agent.builtin.secrets import HIDDEN
from tui_agent.builtin.shell import seccomp
from tui_agent.builtin.shell.private import hide_args
from tui_agent.config.shell_settings import ShellSettings

__all__ = ["HIDDEN", "Choice", "Command", "Workspace", "base_args", "bwrap_argv",
           "bwrap_command", "bwrap_problem", "choose", "plain_argv", "writable"]

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


ISOLATION = ("--unshare-user", "--cap-drop", "ALL")
"""A user namespace of its own with no capabilities: even run as root, a command cannot
mount, change what it may write, or use root's file permissions beyond its own files.
Used where bwrap's self-test passes with it."""


@dataclass
class Command:
    """A command line and the descriptors its first process must inherit (bwrap's
    seccomp filter); :meth:`close` closes them in this process once it started."""

    argv: list[str]
    fds: tuple[int, ...] = ()

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


@functools.cache
def _probe() -> tuple[str | None, tuple[str, ...], bool]:
    """bwrap's self-test: (None, or why bwrap does not run here; the isolation arguments
    that work; whether the seccomp filter works), the strictest that passes."""
    found = shutil.which("bwrap")
    if found is None:
        return ("bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install "
                "bubblewrap)", (), False)
    problem: str | None = None
    for isolation, filtered in ((ISOLATION, True), ((), True), ((), False)):
        problem = _self_test(found, isolation, filtered)
        if problem is None:
            return None, isolation, filtered
    return problem, (), False


def _self_test(found: str, isolation: tuple[str, ...], filtered: bool) -> str | None:
    command = Command([found, *base_args(network=False), *isolation])
    program = seccomp.program() if filtered else None
    if filtered and program is None:
        return "no seccomp filter for this machine's architecture"
    if program is not None:
        command.fds = (seccomp.pipe_with(program),)
        command.argv += ["--seccomp", str(command.fds[0])]
    try:
        done = subprocess.run([*command.argv, "true"], capture_output=True, timeout=10,
                              pass_fds=command.fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed its self-test ({exc})"
    finally:
        command.close()
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap failed its self-test: {said[-1] if said else done.returncode}"
    return None


def bwrap_problem() -> str | None:
    """None when bubblewrap runs here; else why not, for people."""
    return _probe()[0]


def base_args(network: bool) -> list[str]:
    """The file system read-only, ``/dev``, ``/proc``, ``/tmp`` and ``/run`` of its own
    (``/run`` holds the host's sockets: the user's D-Bus and systemd, keyrings, agents,
    the Docker engine, the DNS resolver), and its own namespaces."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--tmpfs", "/run"]
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        args += ["--tmpfs", "/var/run"]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
             "--new-session"]
    return [*args, *_resolver()] if network else [*args, "--unshare-net"]


def _resolver() -> list[str]:
    """``/etc/resolv.conf`` is often a link into ``/run`` (systemd-resolved): its file is
    bound back, read-only, so names still resolve with the network on."""
    real = os.path.realpath("/etc/resolv.conf")
    if real.startswith(("/run/", "/var/run/")) and os.path.isfile(real):
        return ["--ro-bind", real, real]
    return []


def bwrap_argv(command: str, cwd: Path, roots: Sequence[Path], network: bool,
               env: Mapping[str, str] = os.environ, seccomp_fd: int | None = None
               ) -> list[str]:
    """The bwrap command line that runs ``sh -c command`` in ``cwd``: the roots bound
    read-write, each root's ``.git`` bound back read-only (a hook or ``core.fsmonitor``
    written there would run outside the sandbox, at the user's next ``git status``), then
    the private places covered (a project in the home folder still hides ``~/.ssh``).
    ``seccomp_fd``: a descriptor holding :func:`~tui_agent.builtin.shell.seccomp.program`
    (Unix sockets refused)."""
    args = [shutil.which("bwrap") or "bwrap", *base_args(network), *_probe()[1]]
    for root in roots:
        args += ["--bind", str(root), str(root)]
    for root in roots:
        git = root / ".git"
        if git.exists():
            args += ["--ro-bind", str(git), str(git)]
    args += hide_args(env)
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return [*args, "--chdir", str(cwd), "/bin/sh", "-c", command]


def bwrap_command(command: str, cwd: Path, roots: Sequence[Path], network: bool,
                  unix_sockets: bool = False, env: Mapping[str, str] = os.environ
                  ) -> Command:
    """:func:`bwrap_argv` with the seccomp filter that refuses Unix sockets, unless
    ``unix_sockets`` (or the filter does not work here)."""
    program = None if unix_sockets or not _probe()[2] else seccomp.program()
    if program is None:
        return Command(bwrap_argv(command, cwd, roots, network, env))
    fd = seccomp.pipe_with(program)
    return Command(bwrap_argv(command, cwd, roots, network, env, fd), (fd,))


def plain_argv(command: str) -> list[str]:
    return ["/bin/sh", "-c", command]
