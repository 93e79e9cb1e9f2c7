"""How a command is kept from the places that hold secrets
(:func:`~tui_agent.builtin.secrets.secret_places`: keys, tokens, credentials and
histories under the home folder, tui-agent's own config, data and state, the Docker
engine's sockets): the sandbox covers each of them. The file tools refuse the same list."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tui_agent.builtin.secrets import secret_places


def hide_args(env: Mapping[str, str]) -> list[str]:
    """bwrap arguments that cover each place of :func:`secret_places` that exists: a
    folder by an empty one, anything else (a file, a socket) by an empty file. Places
    under ``/run`` need nothing: the sandbox's ``/run`` is an empty one of its own."""
    args: list[str] = []
    seen: set[Path] = set()
    for path in secret_places(env):
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
