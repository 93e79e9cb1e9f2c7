"""The ``tui-agent`` command: its words parsed (the flags themselves are
:mod:`tui_agent.cli.parser`'s) and handed to the command they name, whose work is
:mod:`tui_agent.cli.commands`' (with the configuration :mod:`tui_agent.cli.settings`
reads); an interrupt or a closed pipe on the way ends it cleanly.

Only argparse and our config are imported up front: ``--help`` and bad usage
answer at once, and litellm is imported only when a model is about to be used.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from tui_agent.cli.commands import (
    cmd_acp,
    cmd_agents,
    cmd_config,
    cmd_hooks,
    cmd_run,
    cmd_servers,
    cmd_skills,
    cmd_tui,
    startup,
)
from tui_agent.cli.interrupt import was_interrupt, watching
from tui_agent.cli.parser import (
    build_parser,
    misplaced,
    not_utf8,
    parse_strictly,
    print_as_run,
    run_flags_before_run,
)
from tui_agent.cli.settings import config_secrets

__all__ = ["build_parser", "entry", "main", "startup"]


def main(argv: Sequence[str] | None = None) -> int:
    with watching() as watch:
        try:
            code = _command(list(sys.argv[1:] if argv is None else argv))
        except BrokenPipeError:  # `tui-agent run ... | head` closed early: not an error of ours
            sys.stderr.close()
            return 0
        except BaseException as exc:  # a Ctrl-C before a session exists (e.g. at an import)
            if isinstance(exc, SystemExit) or not was_interrupt(exc, watch):
                raise
            sys.stderr.write("\ntui-agent: interrupted\n")
            return 130
        if watch.dropped:  # a Ctrl-C Python swallowed, and the command ended before it came back
            sys.stderr.write("\ntui-agent: interrupted\n")
            return 130
        return code


def _command(words: list[str]) -> int:
    words = print_as_run(words)
    parser = build_parser(words)
    problem = not_utf8(words)
    if problem:
        parser.error(problem)
    run_flags_before_run(parser, words)
    args = parse(parser, words)
    misplaced(parser, args)
    from tui_agent.cli.config_only import config_only

    with config_only(parser, args):
        return _dispatch(args)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "mcp":
        from tui_agent.headless import mcp

        return mcp.run(args, sys.stdout, sys.stderr)
    if args.command in ("servers", "stubs", "login", "logout"):
        return cmd_servers(args, sys.stdout, sys.stderr)
    if args.command == "sessions":
        from tui_agent.headless import commands

        return commands.sessions(args.limit, sys.stdout, config_secrets(args, sys.stderr))
    if args.command == "skills":
        return cmd_skills(args, sys.stdout, sys.stderr)
    if args.command == "agents":
        return cmd_agents(args, sys.stdout, sys.stderr)
    if args.command == "export":
        from tui_agent.headless import commands

        return commands.export(args.id, args.output, sys.stdout, sys.stderr,
                               config_secrets(args, sys.stderr))
    if args.command == "config":
        return cmd_config(args, sys.stdout, sys.stderr)
    if args.command == "acp":
        return cmd_acp(args, sys.stderr)
    if args.command == "hooks":
        return cmd_hooks(args, sys.stdout, sys.stderr)
    if args.command == "tools":
        from pathlib import Path

        from tui_agent.builtin.server import serve

        return serve(args.root or [], Path.cwd())
    if args.command is None and (args.demo or (sys.stdin.isatty() and sys.stdout.isatty())):
        return cmd_tui(args, sys.stderr)
    return cmd_run(args, sys.stdin, sys.stdout, sys.stderr)


def parse(parser: argparse.ArgumentParser, words: list[str]) -> argparse.Namespace:
    """The flags; for ``mcp add NAME ... -- COMMAND ARGS``, what follows ``--`` is the
    server's command as it is (its own flags are not ours)."""
    if "--" in words and "mcp" in words[:words.index("--")]:
        cut = words.index("--")
        args = parse_strictly(parser, words[:cut])
        if args.command == "mcp" and args.mcp_command == "add":
            from tui_agent.cli.mcp_command import add_words

            return add_words(parser, args, words[cut + 1:])
    if "mcp" in words and "add" in words:
        from tui_agent.cli.mcp_command import add_without_dashes

        return add_without_dashes(parser, words)
    return parse_strictly(parser, words)


def entry() -> None:
    """The console script: :func:`main`, then a fast exit.

    Tearing down the interpreter after litellm and openai are loaded costs about 1.2 s
    here, and every session file is closed and fsynced by now: the teardown is skipped."""
    try:
        code = main()
    except KeyboardInterrupt:  # Ctrl-C before main() could catch it (parsing the flags)
        sys.stderr.write("\ntui-agent: interrupted\n")
        code = 130
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)  # a Ctrl-C caught on the way must not end it as a death by SIGINT


if __name__ == "__main__":
    entry()
