"""Where tui-agent keeps its files: pure functions of the environment (XDG base dirs).

Nothing here is read at import time, so tests point the XDG variables at a
temporary directory and get a clean, isolated tree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "tui-agent"
CONFIG_ENV = "TUI_AGENT_CONFIG"
"""Names the config file in place of the XDG default (``--config`` still wins)."""
ONLY_ENV = "TUI_AGENT_CONFIG_ONLY"
"""Set to the same file as :data:`CONFIG_ENV` for the length of a command given
``--config-only FILE``: that file is then labelled as the flag, not as the user config."""


def _base(env: Mapping[str, str], var: str, fallback: str) -> Path:
    value = env.get(var, "")
    # The XDG spec says relative paths are invalid and must be ignored.
    if value and os.path.isabs(value):
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / fallback


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _base(env, "XDG_CONFIG_HOME", ".config") / APP


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _base(env, "XDG_DATA_HOME", ".local/share") / APP


def state_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _base(env, "XDG_STATE_HOME", ".local/state") / APP


def default_config_file(env: Mapping[str, str] = os.environ) -> Path:
    """The config file to read when ``--config`` is not given."""
    override = env.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    return config_dir(env) / "config.toml"


def sessions_dir(env: Mapping[str, str] = os.environ) -> Path:
    return data_dir(env) / "sessions"
