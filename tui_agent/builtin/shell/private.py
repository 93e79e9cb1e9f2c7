"""The places a command must not see: where keys, tokens, credentials and histories live
(:data:`~tui_agent.builtin.secrets.HIDDEN`, under the home folder), tui-agent's own
config, data and state (as the app resolved them and passed them in
:data:`~tui_agent.config.builtin_server.PRIVATE_VARIABLE`: the server's own environment is
too small to find them), and the
Docker engine's socket (which gives root on the host) wherever it is.

One list for every tool of the built-in server: the sandbox covers these places
(:func:`hide_args`), and the file tools refuse them (:mod:`tui_agent.builtin.secrets`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tui_agent.builtin.secrets import HIDDEN, given_places
from tui_agent.config.builtin_server import private_paths

DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")
"""The Docker engine's usual sockets (also covered by the sandbox's empty ``/run``)."""


def places(env: Mapping[str, str]) -> list[Path]:
    """Every place to hide, as this process's environment ``env`` names them."""
    home = Path(env.get("HOME") or Path.home())
    found = [home / name for name in HIDDEN]
    found += [Path(p) for p in [*private_paths(env), *DOCKER_SOCKETS]]
    if runtime := env.get("XDG_RUNTIME_DIR"):
        found.append(Path(runtime) / "docker.sock")
    return found + given_places(env)


def hide_args(env: Mapping[str, str]) -> list[str]:
    """bwrap arguments that cover each place of :func:`places` that exists: a folder by
    an empty one, anything else (a file, a socket) by an empty file. Places under ``/run``
    need nothing: the sandbox's ``/run`` is an empty one of its own."""
    args: list[str] = []
    seen: set[Path] = set()
    for path in places(env):
        if path.is_symlink():
            path = path.resolve()
        if path in seen or Path(os.path.realpath(path)).is_relative_to("/run"):
            continue
        seen.add(path)
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    return args
