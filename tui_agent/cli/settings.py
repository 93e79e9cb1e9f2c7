"""The configuration a command runs with: read from the files ``--config`` and
``--mcp-config`` name (its warnings printed), with the command line's flags over it, and the
tool filter the flags ask for. Every import is made when a command needs it: ``--help``
and bad usage answer at once."""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.core.filters import ToolFilter


def load_settings(args: argparse.Namespace, err: IO[str]) -> Settings | None:
    """The configuration ``--config`` and ``--mcp-config`` name, with its warnings
    printed; None (with the error printed) when it is invalid."""
    from tui_agent.config import ConfigError, load
    from tui_agent.config.printable import clean, shown

    try:
        settings = load(args.config, args.mcp_config or [],
                        project=not getattr(args, "no_project", False),
                        trust=bool(getattr(args, "trust_project", False)),
                        builtin=not getattr(args, "no_builtin", False))
        settings.add_dirs(getattr(args, "add_dir", None) or [])
        from tui_agent.custom.hooks import parse_hooks  # a hook not honoured: refused

        parse_hooks(settings.hooks)
    except ConfigError as exc:  # may quote a name from a file: cleaned as every output
        err.write(f"tui-agent: {clean(str(exc))}\n")
        return None
    if not getattr(args, "no_project", False):
        from tui_agent.wiring.prompt import hold_memory

        hold_memory(settings, trust=bool(getattr(args, "trust_project", False)))
    for warning in settings.warnings:
        err.write(f"tui-agent: warning: {shown(warning, settings.secrets)}\n")
    if settings.held is not None and args.command != "config":
        from tui_agent.config.show import held_warning

        err.write(f"tui-agent: warning: {clean(held_warning(settings.held))}\n")
    return settings


def config_secrets(args: argparse.Namespace, err: IO[str]) -> frozenset[str]:
    """The configuration's secrets (its keys, headers, ``${VAR}`` values, and the
    environment's keys), for ``sessions`` and ``export`` to mask again what they show; the
    environment's keys alone, with a warning, when the configuration cannot be read (a
    saved conversation can still be read and exported)."""
    from tui_agent.config import ConfigError, load

    try:
        return load(args.config, args.mcp_config or []).secrets
    except ConfigError as exc:
        err.write(f"tui-agent: warning: {exc}; only the environment's keys are masked "
                  "again in what is shown\n")
        return frozenset()


def apply_flags(settings: Settings, args: argparse.Namespace, err: IO[str]) -> bool:
    """Command-line flags over the config: ``--model``, ``--api-base``,
    ``--reasoning-effort``, ``--code-mode``, ``--mode``; False (with the error printed) when the
    model chosen has a ``[models]`` table that cannot be used."""
    from tui_agent.config import ConfigError

    try:
        settings.override(model=args.model, api_base=args.api_base,
                          code_mode=bool(getattr(args, "code_mode", None)),
                          reasoning_effort=getattr(args, "reasoning_effort", None),
                          mode=getattr(args, "mode", None))
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\n")
        return False
    return True


def tool_filter(args: argparse.Namespace) -> ToolFilter:
    """``--servers``, ``--exclude-servers``, ``--tools`` and ``--exclude-tools``."""
    from tui_agent.core.filters import ToolFilter, split

    return ToolFilter(servers=split(getattr(args, "servers", None)),
                      exclude_servers=split(getattr(args, "exclude_servers", None)) or (),
                      tools=split(getattr(args, "tools", None)),
                      exclude_tools=split(getattr(args, "exclude_tools", None)) or ())


def narrowed(settings: Settings, args: argparse.Namespace, err: IO[str]) -> ToolFilter | None:
    """The tool filter the flags ask for (:func:`tool_filter`), with the servers it leaves
    out taken out of ``settings``; None (with the error printed) when a server pattern
    names no configured server."""
    chosen = tool_filter(args)
    problem = chosen.narrow(settings)
    if problem:
        err.write(f"tui-agent: {problem}\n")
        return None
    return chosen
