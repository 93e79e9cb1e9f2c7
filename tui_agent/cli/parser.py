"""The command line's parser: the program's flags and each command's parser
(:mod:`~tui_agent.cli.command_parsers`, built only for the command given), and the checks
argparse cannot make itself (a ``run`` flag given before ``run``, a chat flag given to a
command it means nothing to)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from tui_agent import __version__
from tui_agent.cli.command_parsers import COMMAND_PARSERS
from tui_agent.cli.flags import (
    CHAT_FLAGS,
    COMMANDS,
    FILTER_FLAGS,
    NO_FILTERS,
    RUN_ONLY,
    TAKES,
    common,
)

__all__ = ["CHAT_FLAGS", "COMMANDS", "FILTER_FLAGS", "NO_FILTERS", "RUN_ONLY", "TAKES",
           "build_parser", "innermost", "misplaced", "not_utf8", "parse_strictly",
           "print_as_run", "run_flags_before_run", "visible"]


def build_parser(words: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line's parser. Given the ``words`` to parse, a command's flags
    (and the modules they come from) are only built when its name is among them: the
    chat app's first frame does not wait for them."""
    parser = argparse.ArgumentParser(
        prog="tui-agent",
        description="A terminal chat agent for any LLM, with MCP tools behind an approval gate.",
        epilog="Without a command: the chat app (on a terminal), or one headless turn with "
               "the prompt from stdin. 'tui-agent run --help' for headless use.")
    parser.add_argument("--version", action="version", version=f"tui-agent {__version__}")
    common(parser)
    parser.add_argument("--demo", action="store_true",
                        help="an offline tour: a scripted model and a bundled MCP server")
    parser.add_argument("-p", "--print", dest="print_", action="store_true",
                        help="-p PROMPT is 'run PROMPT': one turn headless, the reply "
                             "printed (what follows -p takes run's flags too)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (what, build) in COMMAND_PARSERS.items():
        if words is None or name in words:
            build(sub, name, what)
        else:  # listed in --help; never parsed this time
            sub.add_parser(name, help=what.split(":")[0].split(" (")[0]
                           if name in ("login", "logout") else what)
    return parser


PRINT_FLAGS = ("-p", "--print")
"""The short form of ``run`` (``tui-agent -p PROMPT``), as Claude Code and gemini-cli
spell it."""


def print_as_run(words: list[str]) -> list[str]:
    """``tui-agent [flags] -p PROMPT ...`` as ``tui-agent [flags] run PROMPT ...``: the
    first ``-p`` (or ``--print``) given before any command becomes the word ``run``, so
    what follows it is read as ``run`` reads it (its flags, ``-`` for stdin)."""
    for i, word in enumerate(words):
        if word in COMMANDS or word == "--":
            return words
        if word in PRINT_FLAGS:
            return [*words[:i], "run", *words[i + 1:]]
        if word.startswith("-p") and not word.startswith("--"):  # -p"prompt" in one word
            return [*words[:i], "run", word[2:].removeprefix("="), *words[i + 1:]]
    return words


def visible(text: str) -> str:
    """``text`` with what cannot be shown as it is escaped: a byte that was not UTF-8
    (Python hands it over as a lone surrogate, ``\\udcff``) as ``\\xff``, the rest as
    :func:`~tui_agent.config.printable.safe_name` prints any name (another lone surrogate
    as ``\\ud800``, a control character as its escape)."""
    from tui_agent.config.printable import safe_name

    return safe_name(re.sub("[\udc80-\udcff]",
                            lambda byte: f"\\x{ord(byte[0]) - 0xDC00:02x}", text))


def not_utf8(words: Sequence[str]) -> str | None:
    """Why a word of the command line cannot be used, or None: one that is not UTF-8
    text (a byte of another encoding, a lone surrogate) could be neither printed, nor
    written to a config file, nor sent to a model or a server, so it is refused here,
    named, before anything is done."""
    for number, word in enumerate(words, 1):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            return (f"argument {number}, '{visible(word)}', is not UTF-8 text: give it in "
                    "UTF-8")
    return None


def run_flags_before_run(parser: argparse.ArgumentParser, words: list[str]) -> None:
    """``tui-agent --max-depth 3`` would be blamed on "invalid choice: '3'": say instead
    that the flag belongs to ``run``."""
    for word in words:
        if word == "run" or word == "--":
            return
        flag = word.split("=", 1)[0]
        if flag in RUN_ONLY:
            parser.error(f"{flag} is an option of 'run': tui-agent run {flag} ... PROMPT")


def misplaced(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A chat flag (``--model``...) given to a command that does not take it: an error."""
    if args.command in TAKES:
        for dest, flag in CHAT_FLAGS.items():
            if dest not in TAKES[args.command] and getattr(args, dest, None):
                parser.error(f"{flag} does not apply to 'tui-agent {args.command}' (it is "
                             "for the chat and 'run')")
    if args.command in NO_FILTERS:
        for dest, flag in FILTER_FLAGS.items():
            if getattr(args, dest, None):
                parser.error(f"{flag} does not apply to 'tui-agent {args.command}' (it "
                             "narrows the servers and tools of the chat, 'run', 'servers' "
                             "and 'stubs')")


def parse_strictly(parser: argparse.ArgumentParser, words: list[str]) -> argparse.Namespace:
    """``parser.parse_args(words)``, but a word no parser took is reported by the command
    it was given to, with that command's usage (``tui-agent mcp add NAME --bogus`` shows
    how ``mcp add`` is used, not the whole program's usage)."""
    args, extra = parser.parse_known_args(words)
    if extra:
        parser = innermost(parser, args)
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def innermost(parser: argparse.ArgumentParser,
            args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost (sub)command parser ``args`` went through."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return innermost(chosen, args)
    return parser
