"""The flags of ``mcp add``, alone: the command line's parser is built at every start
(the chat app's too), so this module imports argparse and nothing else. What the words
mean is :mod:`tui_agent.wiring.mcp_add`'s."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence

USAGE = ("NAME -- COMMAND [ARGS...] | NAME --url URL [--transport http|sse] | "
         "NAME --docker IMAGE [-- COMMAND [ARGS...]]")

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``mcp add`` (the command's words after ``--`` are split off first)."""
    parser.add_argument("name", metavar="NAME",
                        help="the server's name: letters, digits, '-' and '_'")
    parser.add_argument("--url", help="a remote server (streamable HTTP, or SSE)")
    parser.add_argument("--transport", choices=("http", "sse"),
                        help="with --url: http (streamable HTTP; the default unless the "
                             "URL ends in /sse) or sse")
    parser.add_argument("--docker", metavar="IMAGE",
                        help="run the server in a container of IMAGE (what follows -- is "
                             "run inside it; default the image's own command)")
    parser.add_argument("--volume", action="append", default=[], metavar="SRC:DST[:ro]",
                        help="with --docker: a mount, as docker -v takes it (repeatable)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="an environment variable for the server (repeatable); write "
                             "a secret as ${VAR} to keep it out of the file, or give the "
                             "NAME of one set in your environment to pass it on (written as "
                             "NAME=${NAME})")
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="an HTTP header for --url (repeatable); ${VAR} works here too")
    parser.add_argument("--auto", action="append", default=[], metavar="TOOL",
                        help="a tool (or glob) that runs without asking (repeatable)")
    parser.add_argument("--startup-timeout", type=float, metavar="SECONDS",
                        help="how long the server may take to start (default 10; a "
                             "container's start or a first download can take longer)")
    parser.add_argument("--scope", choices=("user", "project"),
                        help="user: your config file (default); project: this project's "
                             ".tui-agent/config.toml")
    parser.add_argument("--force", action="store_true",
                        help="replace a server of the same name")
    parser.add_argument("--no-start", action="store_true",
                        help="write it without checking the URL or starting the server")


def with_dashes(prog: str, words: Sequence[str], name: str, command: Sequence[str]) -> str:
    """The hint for a server command given without ``--`` (its ``-m``, ``-y`` were then
    taken for ours): ``words`` (what followed ``add``) again, with ``--`` put before
    ``command``, the positional words argparse found after ``name``."""
    if command and name in words:
        after = words.index(name) + 1
        if command[0] in words[after:]:
            cut = words.index(command[0], after)
            fixed = shlex.join([*words[:cut], "--", *words[cut:]])
            return f"put -- before the server's command: {prog} {fixed}"
    return (f"if it is the server command's, put -- before the command: {prog} NAME -- "
            "COMMAND [ARGS...]")


def one_word(name: str, before: Sequence[str]) -> str | None:
    """Why words between NAME and ``--`` are refused (``mcp add bad name -- x`` would
    run ``name x``), or None."""
    if not before:
        return None
    return (f"NAME is one word, but '{shlex.join([name, *before])}' came before -- (the "
            "server's command and its arguments go after --)")
