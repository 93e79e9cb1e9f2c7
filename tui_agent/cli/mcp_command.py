"""``tui-agent mcp add``'s server command, the words after ``--``: what was meant when the
``--`` is missing (the server's ``-m`` taken for a flag of ours) or a word too many comes
before it (``mcp add bad name -- x`` would run ``name x``), said with ``mcp add``'s own
usage. Apart from :mod:`tui_agent.cli.mcp_parser`, which :mod:`tui_agent.cli.parser`
imports: these need the parser's helpers."""

from __future__ import annotations

import argparse

from tui_agent.cli.parser import innermost, parse_strictly
from tui_agent.wiring.mcp_words import one_word, with_dashes


def add_words(parser: argparse.ArgumentParser, args: argparse.Namespace,
              command: list[str]) -> argparse.Namespace:
    """``mcp add``'s command, what follows ``--``; a word between NAME and ``--`` is
    refused (``mcp add bad name -- x`` would otherwise run ``name x``)."""
    problem = one_word(args.name, args.words)
    if problem:
        innermost(parser, args).error(problem)
    args.words = command
    return args


def add_without_dashes(parser: argparse.ArgumentParser,
                       words: list[str]) -> argparse.Namespace:
    """``mcp add t3 python3 -m server``: the server's ``-m`` is not ours; say to put
    ``--`` before its command rather than only that ``-m`` is unknown."""
    args, extra = parser.parse_known_args(words)
    if extra and args.command == "mcp" and args.mcp_command == "add":
        after = words[words.index("add", words.index("mcp")) + 1:]
        # argparse leaves the command among the extras when a flag of ours came between
        # NAME and it (``add t5 --no-start python3 x.py``).
        command = args.words or ([] if extra[0].startswith("-") else extra)
        innermost(parser, args).error(
            f"unrecognized arguments: {' '.join(extra)}\n"
            + with_dashes("tui-agent mcp add", after, args.name, command))
    return parse_strictly(parser, words)
