"""The flags the chat and ``run`` share, and which commands take which: the tables the
parsers are built from and the checks read (:mod:`tui_agent.cli.parser`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui_agent.config.reasoning import REASONING_EFFORTS

MODES = ("default", "plan", "auto")
"""The permission modes (tui_agent.core.permissions.modes: the command line reads no core
module before it needs one)."""

COMMANDS = ("run", "acp", "servers", "stubs", "login", "logout", "sessions", "skills", "agents",
            "export", "config", "mcp", "tools", "hooks")


CHAT_FLAGS = {"model": "--model", "api_base": "--api-base", "resume": "--resume / -c",
              "code_mode": "--code-mode", "reasoning_effort": "--reasoning-effort",
              "mode": "--mode"}
"""Flags of the chat and ``run`` (by their destination), which other commands take only
where they mean something."""
TAKES = {"servers": set(), "stubs": set(), "login": set(), "logout": set(), "sessions": set(),
         "skills": set(), "agents": set(), "export": set(),
         "config": {"model", "api_base", "code_mode", "reasoning_effort"}, "mcp": set(),
         "tools": set(), "hooks": set()}
FILTER_FLAGS = {"servers": "--servers", "exclude_servers": "--exclude-servers",
                "tools": "--tools", "exclude_tools": "--exclude-tools"}
"""The flags that narrow which servers and tools are offered (by their destination)."""
NO_FILTERS = ("login", "logout", "sessions", "skills", "agents", "export", "mcp", "tools",
              "hooks")
"""Commands the filters mean nothing to: ``login NAME`` names its one server, the others
start none. Their parsers do not take them, and given before the command they are refused
by name."""
RUN_ONLY = ("--approve", "--elicit", "--sampling", "--attach", "--mcp-prompt", "--verbose",
            "--output", "--session", "--max-depth", "--compact", "--image", "--login",
            "--show-reasoning")


CONFIG_HELP = ("one more config file, read on top of your user config "
               "($TUI_AGENT_CONFIG, else $XDG_CONFIG_HOME/tui-agent/config.toml) and the "
               "project's: its keys win, the others' stay (--config-only reads it alone)")
CONFIG_ONLY_HELP = ("read this config file instead of your user config, and no project "
                    "files: only it (and --mcp-config) and the flags")


def common(parser: argparse.ArgumentParser, *, inner: bool = False,
            chat: frozenset[str] | set[str] = frozenset(CHAT_FLAGS),
            filters: bool = True) -> None:
    """Flags accepted before and after the command; after it they must not reset
    what was given before it (``tui-agent --config F run ...``). ``chat``: which of the
    chat's own flags (``CHAT_FLAGS``) this parser takes; ``filters``: whether it takes
    ``--servers``, ``--tools`` and their ``--exclude-`` pair."""
    keep: dict[str, Any] = {"default": argparse.SUPPRESS} if inner else {}
    parser.add_argument("--config", type=Path, metavar="FILE", help=CONFIG_HELP, **keep)
    parser.add_argument("--config-only", type=Path, metavar="FILE", help=CONFIG_ONLY_HELP,
                        **keep)
    parser.add_argument("--mcp-config", type=Path, action="append", metavar="FILE",
                        help="MCP servers in JSON (mcpServers or servers format); repeatable",
                        **keep)
    if "model" in chat:
        parser.add_argument("--model", metavar="MODEL",
                            help="any litellm model string, e.g. openai/gpt-4o-mini", **keep)
    if "api_base" in chat:
        parser.add_argument("--api-base", metavar="URL",
                            help="base URL of the provider or an OpenAI-compatible server",
                            **keep)
    if "reasoning_effort" in chat:
        parser.add_argument("--reasoning-effort", choices=REASONING_EFFORTS, metavar="LEVEL",
                            help="how hard a reasoning model thinks: "
                                 f"{', '.join(REASONING_EFFORTS)} (none turns thinking off; "
                                 "default: the model's reasoning_effort setting)", **keep)
    if "resume" in chat:
        parser.add_argument("--resume", nargs="?", const="\0latest", metavar="ID",
                            help="continue a conversation (the latest when no ID is given)",
                            **keep)
        parser.add_argument("-c", "--continue", dest="resume", action="store_const",
                            const="\0latest", help="continue the latest conversation", **keep)
    if "code_mode" in chat:
        parser.add_argument("--code-mode", action="store_true",
                            help="reach MCP tools through one Starlark script ([code_mode])",
                            **keep)
    if "mode" in chat:
        parser.add_argument("--mode", choices=MODES, metavar="MODE",
                            help="the permission mode to start in: default (ask before tools "
                                 "that are not allowed), plan (read-only: changing tools are "
                                 "refused, the model presents a plan), auto (every tool not "
                                 "denied runs without asking); default: [permissions] "
                                 "default_mode", **keep)
    parser.add_argument("--trust-project", action="store_true",
                        help="agree to what this project's files (.tui-agent/config.toml, "
                             ".mcp.json, mcp.json) hold until trusted: servers, model, "
                             "roots...; remembered until they change", **keep)
    parser.add_argument("--no-project", action="store_true",
                        help="ignore the project's files (config, servers, AGENTS.md memory); "
                             "only the user's config and memory, and flags",
                        **keep)
    if filters:
        filters_of(parser, keep)
        parser.add_argument("--no-builtin", action="store_true",
                            help="leave out the built-in server 'local' (tui-agent's own "
                                 "file tools)", **keep)
    if "resume" in chat:
        parser.add_argument("--add-dir", action="append", type=Path, metavar="DIR",
                            help="one more folder the tools may work in for this session "
                                 "(an MCP root; repeatable)", **keep)


def filters_of(parser: argparse.ArgumentParser, keep: dict[str, Any]) -> None:
    for flag, what in (("--servers", "only these servers"),
                       ("--exclude-servers", "not these servers"),
                       ("--tools", "only these tools (server__tool, or a tool name on any "
                                   "server)"),
                       ("--exclude-tools", "not these tools")):
        parser.add_argument(flag, action="append", metavar="LIST",
                            help=f"{what}: comma-separated, globs allowed; narrows what the "
                                 "config allows, never widens it", **keep)
