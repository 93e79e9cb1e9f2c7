"""The built-in server ``local`` (tui-agent's own file tools, ``tui-agent tools serve``),
configured by default: started with this interpreter, its read-only tools auto-approved,
its writes asking. A user's ``[servers.local]`` that says how to start a server (a
``command``, ``url``, ``image``, ``container`` or ``transport``) is theirs and replaces it;
one that does not (``disabled = true``, ``auto = [...]``, ``timeout``...) adjusts the
built-in one. ``--no-builtin`` (or ``TUI_AGENT_NO_BUILTIN=1``) leaves it out.

A stdio server is started with a few variables only, so :func:`add_builtin` hands it
what it must know in its environment: ``[tools.shell]``, the data folder (its checkpoints
must be where ``/rewind`` looks) and the places its shell must hide (tui-agent's config,
data and state as the app resolved them, the config files it read, ``$DOCKER_HOST``'s
socket)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from tui_agent.config import paths
from tui_agent.config.models import ServerConfig
from tui_agent.config.shell_settings import ShellSettings

BUILTIN = "local"
SERVE_ARGS = ["-m", "tui_agent", "tools", "serve"]
READ_ONLY = ["read", "list", "glob", "grep", "shell_output"]
"""The tools that run without asking: they only look, and only inside the roots (or, for
``shell_output``, at what a command the user approved has printed)."""
LAUNCH_KEYS = ("command", "url", "image", "container", "transport")
"""Keys that make a ``[servers.local]`` a server of the user's own."""
OFF_VARIABLE = "TUI_AGENT_NO_BUILTIN"
SHELL_VARIABLE = "TUI_AGENT_SHELL"
"""How the built-in server learns ``[tools.shell]`` (JSON in its environment): it never
reads the config files itself, so a project's held settings stay held."""
PRIVATE_VARIABLE = "TUI_AGENT_PRIVATE"
"""The places the built-in server's shell hides, as the app resolved them (a JSON list
of absolute paths)."""
DATA_VARIABLE = "XDG_DATA_HOME"
"""Where the data directory is (:func:`tui_agent.config.paths.data_dir`)."""
TIMEOUT_MARGIN = 30.0
"""Seconds the hub waits for a ``local`` call beyond the longest command
(``[tools.shell] max_timeout``): the shell ends its own commands, the hub does not cut
them short."""


def defaults() -> dict[str, Any]:
    """The built-in server's table, as a config file would spell it. ``legacy``: roots
    (which it asks the client for) belong to the 2025 protocol."""
    return {"command": sys.executable, "args": list(SERVE_ARGS), "protocol": "legacy",
            "auto": list(READ_ONLY),
            "description": ("tui-agent's own tools: read, list, glob, grep, edit, write, "
                            "shell")}


def builtin_server() -> ServerConfig:
    return ServerConfig(**defaults())


def overlay(raw: dict[str, Any]) -> dict[str, Any]:
    """A config file's data with a ``[servers.local]`` that only adjusts the built-in
    server filled in with its defaults (the file's own keys win)."""
    servers = raw.get("servers")
    if not isinstance(servers, dict):
        return raw
    table = servers.get(BUILTIN)
    if not isinstance(table, dict) or any(key in table for key in LAUNCH_KEYS):
        return raw
    return {**raw, "servers": {**servers, BUILTIN: {**defaults(), **table}}}


def is_builtin(config: ServerConfig) -> bool:
    """Whether ``config`` runs the built-in server (adjusted or not: options such as
    ``--root DIR`` may follow its command)."""
    if config.transport != "stdio":
        return False
    args, width = config.args, len(SERVE_ARGS)
    return any(args[i:i + width] == SERVE_ARGS for i in range(len(args) - width + 1))


def wanted(env: Mapping[str, str]) -> bool:
    """False when the environment turns the built-in server off."""
    return env.get(OFF_VARIABLE, "").strip().lower() not in ("1", "true", "yes", "on")



def docker_socket(env: Mapping[str, str]) -> Path | None:
    """The socket ``$DOCKER_HOST`` names (``unix:///path``), if it names one."""
    url = urlparse(env.get("DOCKER_HOST", ""))
    return Path(url.path) if url.scheme == "unix" and url.path else None


def private_paths(env: Mapping[str, str], files: Sequence[Path] = ()) -> list[str]:
    """tui-agent's own config folder and file, data and state folders (as ``env`` puts
    them), the config ``files`` read, and ``$DOCKER_HOST``'s socket."""
    found = [paths.config_dir(env), paths.default_config_file(env), paths.data_dir(env),
             paths.state_dir(env), *files]
    socket = docker_socket(env)
    found += [socket] if socket else []
    return list(dict.fromkeys(os.path.abspath(p) for p in found))


def add_builtin(servers: MutableMapping[str, ServerConfig], origins: MutableMapping[str, Any],
                shell: ShellSettings, files: Sequence[Path], on: bool,
                env: Mapping[str, str]) -> None:
    """Add the built-in server to ``servers`` (``on``) or, if the one there is the
    built-in one, remove it. Added after the expansion: it has no ``${VAR}`` and no file
    of origin ("always allow" of its tools is then not written to any file). ``files``:
    the config files read outside the project (hidden from its shell)."""
    if on and BUILTIN not in servers:
        servers[BUILTIN] = builtin_server()
    elif not on and BUILTIN in servers and is_builtin(servers[BUILTIN]):
        del servers[BUILTIN]
        origins.pop(BUILTIN, None)
    local = servers.get(BUILTIN)
    if local is None or not is_builtin(local):
        return
    data = {DATA_VARIABLE: env[DATA_VARIABLE]} if env.get(DATA_VARIABLE) else {}
    servers[BUILTIN] = local.model_copy(update={
        "timeout": local.timeout or shell.max_timeout + TIMEOUT_MARGIN,
        "env": {**data, **local.env,
                SHELL_VARIABLE: shell.model_dump_json(exclude_unset=True),
                PRIVATE_VARIABLE: json.dumps(private_paths(env, files))}})
