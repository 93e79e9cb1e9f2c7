"""``tui-agent mcp``: add, remove, list, get and import servers in the config files.

Each command takes the parsed flags and returns the exit code: 0 done, 1 a server was
added but failed to start (it stays added), 2 bad usage or a file that cannot be read
or written (nothing was written). ``add`` ends with the ``servers`` report of the one
server (:mod:`tui_agent.headless.report`); ``import`` writes through the same editor
(:mod:`tui_agent.config.server_edit`) without starting anything.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import IO


def run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Every line goes out cleaned (:mod:`tui_agent.headless.masked`): names, a file's
    error quoting a name, and what another client's file said may hold escapes."""
    from tui_agent.headless.masked import masked

    out, err = masked(out), masked(err)
    verb = args.mcp_command
    problem = unreadable(args)
    if problem is not None:
        err.write(f"tui-agent: {problem}\n")
        return 2
    if verb == "add":
        from tui_agent.headless.mcp.add import add

        return add(args, out, err)
    if verb == "import":
        from tui_agent.headless.mcp.importing import import_servers

        return import_servers(args, out, err)
    from tui_agent.headless.mcp import show

    if verb == "list":
        return show.listing(args, out, err)
    if verb == "get":
        return show.get(args, out, err)
    return show.remove(args, out, err)


def layers(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """The config files the command line names or finds (kind, path), lowest precedence
    first: the user file, the project's, ``--config``, ``--mcp-config``."""
    from tui_agent.config.project import layer_files

    files, _ = layer_files(args.config, args.mcp_config or [], os.environ,
                           project=not args.no_project)
    return files


def unreadable(args: argparse.Namespace) -> str | None:
    """Why a config file the command reads cannot be parsed (as ``run`` says it: the file,
    the line), or None. Every ``mcp`` command refuses such a file: ``list`` would say no
    servers are configured, ``get`` and ``remove`` that the name is unknown, and ``add``
    could not tell whether the name is taken there. A file ``add`` or ``import`` may be
    about to create (``--config``, or the one ``$TUI_AGENT_CONFIG`` names) may be
    missing: it holds no servers, and is written whole."""
    from tui_agent.config.errors import ConfigError
    from tui_agent.config.server_edit import servers_in

    creating = args.mcp_command in ("add", "import")
    for _kind, file in layers(args):
        if creating and not file.exists():
            continue
        try:
            servers_in(file)
        except ConfigError as exc:
            return str(exc)
    return None
