"""The built-in server ``local`` (tui-agent's own file tools, ``tui-agent tools serve``),
configured by default: started with this interpreter, its read-only tools auto-approved,
its writes asking. A user's ``[servers.local]`` that says how to start a server (a
``command``, ``url``, ``image``, ``container`` or ``transport``) is theirs and replaces it;
one that does not (``disabled = true``, ``auto = [...]``, ``timeout``...) adjusts the
built-in one. ``--no-builtin`` (or ``TUI_AGENT_NO_BUILTIN=1``) leaves it out."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from tui_agent.config.models import ServerConfig

BUILTIN = "local"
SERVE_ARGS = ["-m", "tui_agent", "tools", "serve"]
READ_ONLY = ["read", "list", "glob", "grep"]
"""The tools that run without asking: they only look, and only inside the roots."""
LAUNCH_KEYS = ("command", "url", "image", "container", "transport")
"""Keys that make a ``[servers.local]`` a server of the user's own."""
OFF_VARIABLE = "TUI_AGENT_NO_BUILTIN"
SHELL_VARIABLE = "TUI_AGENT_SHELL"
"""How the built-in server learns ``[tools.shell]`` (JSON in its environment): it never
reads the config files itself, so a project's held settings stay held."""


def defaults() -> dict[str, Any]:
    """The built-in server's table, as a config file would spell it. ``legacy``: roots
    (which it asks the client for) belong to the 2025 protocol."""
    return {"command": sys.executable, "args": list(SERVE_ARGS), "protocol": "legacy",
            "auto": list(READ_ONLY),
            "description": "tui-agent's own tools: read, list, glob, grep, edit, write"}


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
    """Whether ``config`` runs the built-in server (adjusted or not)."""
    return config.transport == "stdio" and config.args[-len(SERVE_ARGS):] == SERVE_ARGS


def wanted(env: Mapping[str, str]) -> bool:
    """False when the environment turns the built-in server off."""
    return env.get(OFF_VARIABLE, "").strip().lower() not in ("1", "true", "yes", "on")

