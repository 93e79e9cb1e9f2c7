"""``tui-agent mcp``'s flags: add, remove, list, get and import. ``add`` takes the words
the app's ``/mcp add`` takes (:mod:`tui_agent.wiring.mcp_add` holds them for both); its server's
command after ``--`` is :mod:`tui_agent.cli.mcp_command`'s."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_agent.wiring.mcp_words import USAGE, add_arguments

Common = Callable[..., None]


CONFIG_HELP = {
    "write": "the config file to write to (and read; default: your user config, "
             "$XDG_CONFIG_HOME/tui-agent/config.toml)",
    "remove": "also read this config file (it comes after your user config and the "
              "project's, which are still read: a server it defines is the one removed)",
    "read": "also read this config file (after your user config and the project's, which "
            "are still read)",
}
"""``--config``'s help by what the command does with the file."""


def _files(parser: argparse.ArgumentParser, config: str) -> None:
    """The flags that choose the config files (given after the command too, without
    resetting what was given before it); the chat's and the tool filters mean nothing
    here. ``config``: what the command does with ``--config`` (a key of ``CONFIG_HELP``)."""
    keep: dict[str, Any] = {"default": argparse.SUPPRESS}
    parser.add_argument("--config", type=Path, metavar="FILE", help=CONFIG_HELP[config],
                        **keep)
    parser.add_argument("--config-only", type=Path, metavar="FILE",
                        help="use this file instead of your user config, and no project "
                             "files (it is the one written)", **keep)
    parser.add_argument("--mcp-config", type=Path, action="append", metavar="FILE",
                        help="also read these MCP server JSON files", **keep)
    parser.add_argument("--trust-project", action="store_true",
                        help="agree to this project's servers as they are now", **keep)
    parser.add_argument("--no-project", action="store_true",
                        help="leave the project's config files out", **keep)


def add_mcp(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Common,
            what: str) -> None:
    """The ``mcp`` command and its own commands (``common``: the other commands' shared
    flags; these take only the ones that choose files; ``what``: its line in ``--help``,
    which the parser also shows when it leaves these flags out)."""
    del common
    mcp = sub.add_parser(
        "mcp", help=what,
        description="Manage the MCP servers in your config files (comments and layout "
                    "are kept). Exit codes: 0 done, 1 a server added but failing to start, "
                    "2 bad usage (nothing written).")
    verbs = mcp.add_subparsers(dest="mcp_command", metavar="COMMAND", required=True)
    add = verbs.add_parser(
        "add", help="add a server, start it once and list its tools",
        usage=f"tui-agent mcp add [options] {USAGE}",
        description="Add a server to your config file (or the project's: --scope "
                    "project), then start it once and print its tools, or why it failed "
                    "(it stays added: fix it in the file, or 'tui-agent mcp remove NAME').",
        epilog="Examples: tui-agent mcp add time -- uvx mcp-server-time  |  "
               "tui-agent mcp add docs --url https://example.com/mcp --header "
               "'Authorization: Bearer ${DOCS_TOKEN}'")
    _files(add, "write")
    add_arguments(add)
    add.add_argument("words", nargs="*", metavar="COMMAND",
                     help="after --: the program and its arguments")
    remove = verbs.add_parser(
        "remove", help="remove a server from the file that defines it",
        description="Remove a server's table from the file that defines it (the one that "
                    "wins when several do); every other line of the file is kept.")
    _files(remove, "remove")
    remove.add_argument("name", metavar="NAME", help="the server, as the config names it")
    listing = verbs.add_parser(
        "list", help="every server: name, transport, scope and file",
        description="List every server the config files define, with its transport, scope "
                    "(user, project, --config, --config-only, --mcp-config) and file:line; an "
                    "entry that is not valid is listed with what is wrong, as 'run' words "
                    "it. Nothing is started ('tui-agent servers' starts them).")
    _files(listing, "read")
    get = verbs.add_parser(
        "get", help="one server's settings (secrets hidden)",
        description="Print one server's settings as written (${VAR} references kept, "
                    "other env and header values and secrets hidden), with its scope and "
                    "file:line. Exit 1 if the entry is not valid.")
    _files(get, "read")
    get.add_argument("name", metavar="NAME", help="the server, as the config names it")
    imports = verbs.add_parser(
        "import", help="import servers other clients have configured",
        description="Find the servers Claude Desktop, Claude Code, Cursor, VS Code, "
                    "Windsurf and Zed have configured on this machine (and in this "
                    "project) and list them; import the ones named (or --all).")
    _files(imports, "write")
    imports.add_argument("names", nargs="*", metavar="NAME", help="the servers to import")
    imports.add_argument("--all", action="store_true", help="import every server found "
                         "whose name is not taken yet")
    imports.add_argument("--from", dest="source", type=Path, metavar="FILE",
                         help="read this file (mcpServers or servers JSON) instead")
    imports.add_argument("--scope", choices=("user", "project"),
                         help="where to write them (default: your config file)")
    imports.add_argument("--force", action="store_true",
                         help="replace servers of the same name")

