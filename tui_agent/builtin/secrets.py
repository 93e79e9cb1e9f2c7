"""The places secrets live, which no built-in tool touches: :data:`HIDDEN` under the home
folder (keys and tokens), and tui-agent's own config, data (sessions, checkpoints) and
state folders and config file, wherever the environment the server was started with puts
them (``XDG_*``, ``TUI_AGENT_CONFIG``) and where they are by default. The shell's sandbox
covers them (:mod:`tui_agent.builtin.shell.sandbox`); the file tools refuse a path inside
one and skip them when they walk a folder (:class:`tui_agent.builtin.workspace.Workspace`).
It lives here, below both, so neither imports the other."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tui_agent.config import paths

HIDDEN = (".ssh", ".aws", ".gnupg", ".config/tui-agent", ".docker", ".kube", ".netrc",
          ".azure", ".config/gcloud", ".config/gh", ".password-store", ".pgpass",
          ".git-credentials", ".npmrc", ".pypirc", ".cargo/credentials",
          ".cargo/credentials.toml", ".local/share/keyrings", ".terraform.d",
          ".vault-token")
"""Under the home directory: folders and files that hold keys or tokens; a command sees
them empty (folders) or as an empty file. tui-agent's own config, data (sessions,
checkpoints) and state folders are hidden too, wherever XDG puts them."""


def secret_places(env: Mapping[str, str] = os.environ) -> list[Path]:
    """Every place of :data:`HIDDEN` and tui-agent's own folders, as real paths (a
    ``~/.ssh`` that is a symlink counts where it leads too), each once; they need not
    exist."""
    home = Path(env.get("HOME") or Path.home())
    defaults = {"HOME": str(home)}
    places = [home / name for name in HIDDEN]
    for where in (env, defaults):
        places += [paths.config_dir(where), paths.data_dir(where), paths.state_dir(where)]
    places.append(paths.default_config_file(env))
    found: list[Path] = []
    for place in places:
        for each in (Path(os.path.abspath(place)), Path(os.path.realpath(place))):
            if each not in found:
                found.append(each)
    return found
