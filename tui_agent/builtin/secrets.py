"""The places secrets live, which no built-in tool touches: :data:`HIDDEN` under the home
folder (keys and tokens), tui-agent's own config, data (sessions, checkpoints) and
state folders and config file, wherever the environment the server was started with puts
them (``XDG_*``, ``TUI_AGENT_CONFIG``), where they are by default and as the app resolved
them, and the Docker engine's sockets. The shell's sandbox covers them
(:mod:`tui_agent.builtin.shell.private`); the file tools refuse a path inside one and skip
them when they walk a folder (:class:`tui_agent.builtin.workspace.Workspace`). It lives
here, below both, so neither imports the other."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from tui_agent.config import paths
from tui_agent.config.builtin_server import PRIVATE_VARIABLE, docker_socket

HIDDEN = (
    # keys, tokens and cloud credentials
    ".ssh", ".aws", ".gnupg", ".docker", ".kube", ".netrc", ".azure", ".config/gcloud",
    ".config/gh", ".config/github-copilot", ".config/hub", ".password-store", ".pgpass",
    ".git-credentials", ".npmrc", ".yarnrc", ".pypirc", ".cargo/credentials",
    ".cargo/credentials.toml", ".local/share/keyrings", ".terraform.d", ".vault-token",
    ".config/op", ".cache/huggingface", ".huggingface",
    # other agents' logins and conversations, and tui-agent's own
    ".config/tui-agent", ".claude", ".claude.json", ".codex", ".gemini", ".config/goose",
    # shell and REPL histories
    ".bash_history", ".zsh_history", ".histfile", ".local/share/fish/fish_history",
    ".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
    ".sqlite_history", ".lesshst",
    # browser profiles (cookies, saved passwords)
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".config/microsoft-edge", ".thunderbird",
)
"""Under the home directory: folders and files that hold keys, tokens, logins or
histories; a command sees them empty (folders) or as an empty file, and the file tools
refuse them."""


def secret_places(env: Mapping[str, str] = os.environ) -> list[Path]:
    """Every place of :data:`HIDDEN`, tui-agent's own folders and config file (where
    ``env`` puts them, where they are by default, and as the app passed them) and the
    Docker engine's sockets, as real paths (a ``~/.ssh`` that is a symlink counts where it
    leads too), each once; they need not exist. The one list: the file tools refuse these
    places and the shell's sandbox covers them."""
    home = Path(env.get("HOME") or Path.home())
    defaults = {"HOME": str(home)}
    places = [home / name for name in HIDDEN]
    for where in (env, defaults):
        places += [paths.config_dir(where), paths.data_dir(where), paths.state_dir(where)]
    places.append(paths.default_config_file(env))
    places += given_places(env) + docker_sockets(env)
    found: list[Path] = []
    for place in places:
        for each in (Path(os.path.abspath(place)), Path(os.path.realpath(place))):
            if each not in found:
                found.append(each)
    return found


DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")
"""The Docker engine's usual sockets (which give root on the host)."""


def docker_sockets(env: Mapping[str, str]) -> list[Path]:
    """The Docker engine's sockets: the usual ones, ``$DOCKER_HOST``'s and the rootless
    engine's under ``$XDG_RUNTIME_DIR``."""
    found = [Path(p) for p in DOCKER_SOCKETS]
    if named := docker_socket(env):
        found.append(named)
    if runtime := env.get("XDG_RUNTIME_DIR"):
        found.append(Path(runtime) / "docker.sock")
    return found


def given_places(env: Mapping[str, str]) -> list[Path]:
    """tui-agent's own config, data and state places as the app resolved them and passed
    them in :data:`~tui_agent.config.builtin_server.PRIVATE_VARIABLE` (a JSON list of
    absolute paths; anything else in it is ignored)."""
    try:
        given = json.loads(env.get(PRIVATE_VARIABLE) or "[]")
    except ValueError:
        return []
    if not isinstance(given, list):
        return []
    return [Path(p) for p in given if isinstance(p, str) and os.path.isabs(p)]
