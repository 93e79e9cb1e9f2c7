"""The ``tui-agent`` command: what each command does with its parsed flags (the flags
themselves are :mod:`tui_agent.cli.parser`'s).

Only argparse and our config are imported up front: ``--help`` and bad usage
answer at once, and litellm is imported only when a model is about to be used.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from tui_agent.cli.interrupt import was_interrupt, watching
from tui_agent.cli.parser import (
    build_parser,
    misplaced,
    not_utf8,
    parse_strictly,
    print_as_run,
    run_flags_before_run,
)

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.core.filters import ToolFilter
    from tui_agent.ui.startup import Startup

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


def startup(args: argparse.Namespace) -> Startup:
    """The chat app as the command line asks for it (its config is read after the first
    frame is drawn)."""
    from tui_agent.ui.startup import Startup

    return Startup(config=args.config, mcp_config=tuple(args.mcp_config or ()),
                   model=args.model, api_base=args.api_base, code_mode=bool(args.code_mode),
                   reasoning_effort=args.reasoning_effort, mode=args.mode,
                   demo=args.demo, resume=args.resume, trust_project=args.trust_project,
                   no_project=args.no_project, tool_filter=tool_filter(args),
                   builtin=not args.no_builtin, add_dirs=tuple(args.add_dir or ()))


def cmd_config(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``config``: the user config file's path, or (``--show``) the merged configuration."""
    if not args.show:
        from tui_agent.config import paths

        out.write(f"{paths.default_config_file()}\n")
        return 0
    from tui_agent.config.show import render

    settings = load_settings(args, err)
    if settings is None or not apply_flags(settings, args, err):
        return 2
    out.write(render(settings))
    return 0


def cmd_tui(args: argparse.Namespace, err: IO[str]) -> int:
    """The chat app. ``--demo`` swaps in the scripted tour and the bundled notes server.
    A config error ends it with exit 2, printed once the terminal is restored."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        err.write("tui-agent: the chat app needs a terminal; for pipes and scripts use "
                  "'tui-agent run PROMPT'\n")
        return 2
    from tui_agent.ui.gcpause import hold_until_first_frame

    hold_until_first_frame()  # what start-up allocates lives as long as the app
    from tui_agent.ui.app import run_app

    return run_app(startup(args), err)


def cmd_run(args: argparse.Namespace, stdin: IO[str], out: IO[str], err: IO[str]) -> int:
    from tui_agent.core.llm import NO_MODEL_HELP, preload
    from tui_agent.headless import run, turn
    from tui_agent.wiring.build import LATEST

    settings = load_settings(args, err)
    if settings is None or not apply_flags(settings, args, err):
        return turn.EXIT_USAGE
    chosen = tool_filter(args)
    problem = chosen.narrow(settings)
    if problem:
        err.write(f"tui-agent: {problem}\n")
        return turn.EXIT_USAGE
    if not settings.config.model.name:
        err.write(f"tui-agent: {NO_MODEL_HELP}\n")
        # Bare `tui-agent` comes here only without a terminal (`echo hi | tui-agent`):
        # a script's use, which must see that nothing was answered. On a terminal the
        # first start is the app's, whose welcome says the same.
        return turn.EXIT_USAGE
    preload()  # litellm's import overlaps reading the prompt and opening the session
    words = list(getattr(args, "prompt", []))
    if args.resume and any(c.isspace() for c in args.resume) and args.resume != LATEST:
        # `run --resume "what next?"`: ids never hold spaces, so that was the prompt.
        words, args.resume = [args.resume, *words], LATEST
    prompt = turn.read_prompt(words, stdin)
    mcp_prompt = getattr(args, "mcp_prompt", None)
    compact = bool(getattr(args, "compact", False))
    if prompt is None and not stdin.isatty() and not mcp_prompt and not compact:
        prompt = stdin.read()
    if prompt is not None and not prompt.strip():
        err.write("tui-agent: the prompt is empty\n")
        return turn.EXIT_USAGE
    approve = getattr(args, "approve", None) or ("ask" if stdin.isatty() else "deny")
    run.install_sigterm()
    return run.execute(run.Run(
        settings, prompt, approve, getattr(args, "output", "text"),
        session_file=getattr(args, "session", None), resume=args.resume,
        tool_filter=chosen, elicit=getattr(args, "elicit", "ask"),
        login=getattr(args, "login", "auto"),
        verbose=getattr(args, "verbose", False),
        show_reasoning=getattr(args, "show_reasoning", False),
        sampling=getattr(args, "sampling", "deny"), attach=getattr(args, "attach", None) or [],
        mcp_prompt=mcp_prompt, max_depth=getattr(args, "max_depth", None), compact=compact,
        images=getattr(args, "image", None) or []), out, err)


def cmd_acp(args: argparse.Namespace, err: IO[str]) -> int:
    """``acp``: the agent for an editor, on stdio, with the config and flags of ``run``."""
    settings = load_settings(args, err)
    if settings is None or not apply_flags(settings, args, err):
        return 2
    chosen = tool_filter(args)
    problem = chosen.narrow(settings)
    if problem:
        err.write(f"tui-agent: {problem}\n")
        return 2
    from tui_agent.acp.serve import serve

    return serve(settings, chosen, err)


def cmd_hooks(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``hooks import`` (Claude Code's hooks into the config) and ``hooks list``."""
    from tui_agent.headless import hooks

    if args.hooks_command == "import":
        return hooks.import_hooks(out, err)
    settings = load_settings(args, err)
    return 2 if settings is None else hooks.list_hooks(settings, out)


def cmd_skills(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``skills``: the skills found, as ``/skills`` lists them (``--mcp``: with the
    servers'); 1 if any is broken."""
    from tui_agent.headless import commands

    settings = load_settings(args, err)
    if settings is None:
        return 2
    return commands.skills(settings, out, err, servers=args.mcp)


def cmd_servers(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``servers`` (or ``servers --stats``) and ``stubs``: the config's servers, narrowed by
    the filter flags, started, reported on and stopped; ``login`` and ``logout`` of one."""
    from tui_agent.headless import commands

    if getattr(args, "stats", None) is not None:
        return commands.stats(args.stats, out, err)
    settings = load_settings(args, err)
    if settings is None:
        return 2
    if getattr(args, "level", None):
        settings.config.code_mode.binding_level = args.level
    chosen = tool_filter(args)
    problem = chosen.narrow(settings)
    if problem:
        err.write(f"tui-agent: {problem}\n")
        return 2
    if args.command in ("login", "logout"):
        act = commands.login if args.command == "login" else commands.logout
        return act(settings, args.name, out, err)
    if args.command == "servers":
        return commands.servers(settings, chosen, out, err, resources=args.resources,
                                config=args.config)
    return commands.stubs(settings, chosen, out, err, only=args.files, names_only=args.list,
                          config=args.config)


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
