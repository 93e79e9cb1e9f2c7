"""What each command of ``tui-agent`` does with its parsed flags and its configuration
(:mod:`tui_agent.cli.settings`): the chat app, ``run``, ``acp``, ``config``, ``hooks``,
``skills``, and ``servers``, ``stubs``, ``login`` and ``logout``. The choice among them is
:func:`tui_agent.cli.main`'s; each imports what it uses when it runs (litellm only when a
model is about to be used)."""

from __future__ import annotations

import argparse
import sys
from typing import IO, TYPE_CHECKING

from tui_agent.cli.settings import apply_flags, load_settings, narrowed, tool_filter

if TYPE_CHECKING:
    from tui_agent.ui.startup import Startup


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
    chosen = narrowed(settings, args, err)
    if chosen is None:
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
    chosen = narrowed(settings, args, err)
    if chosen is None:
        return 2
    from tui_agent.acp.login import login, with_stored_key

    if getattr(args, "terminal_login", False):
        return login(settings, err)
    from tui_agent.acp.serve import serve

    return serve(with_stored_key(settings), chosen, err)


def cmd_hooks(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``hooks import`` (Claude Code's hooks into the config) and ``hooks list``."""
    from tui_agent.headless import hooks

    if args.hooks_command == "import":
        return hooks.import_hooks(out, err)
    settings = load_settings(args, err)
    return 2 if settings is None else hooks.list_hooks(settings, out)


def cmd_agents(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``agents``: the agents found, as ``/agents`` lists them; 1 if a file is broken."""
    from tui_agent.headless import commands

    settings = load_settings(args, err)
    if settings is None:
        return 2
    return commands.agents(settings, out)


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
    chosen = narrowed(settings, args, err)
    if chosen is None:
        return 2
    if args.command in ("login", "logout"):
        act = commands.login if args.command == "login" else commands.logout
        return act(settings, args.name, out, err)
    if args.command == "servers":
        return commands.servers(settings, chosen, out, err, resources=args.resources,
                                config=args.config)
    return commands.stubs(settings, chosen, out, err, only=args.files, names_only=args.list,
                          config=args.config)
