"""The ``tui-agent`` command.

Only argparse and our config are imported up front: ``--help`` and bad usage
answer at once, and litellm is imported only when a model is about to be used.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tui_agent import __version__

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.core.filters import ToolFilter
    from tui_agent.ui.startup import Startup

COMMANDS = ("run", "servers", "stubs", "login", "logout", "sessions", "export", "config")


CHAT_FLAGS = {"model": "--model", "api_base": "--api-base", "resume": "--resume / -c",
              "code_mode": "--code-mode"}
"""Flags of the chat and ``run`` (by their destination), which other commands take only
where they mean something."""
TAKES = {"servers": set(), "stubs": set(), "login": set(), "logout": set(), "sessions": set(),
         "export": set(), "config": {"model", "api_base", "code_mode"}}
RUN_ONLY = ("--approve", "--elicit", "--sampling", "--attach", "--mcp-prompt", "--verbose",
            "--output", "--session", "--max-depth", "--compact", "--image")


def _common(parser: argparse.ArgumentParser, *, inner: bool = False,
            chat: frozenset[str] | set[str] = frozenset(CHAT_FLAGS)) -> None:
    """Flags accepted before and after the command; after it they must not reset
    what was given before it (``tui-agent --config F run ...``). ``chat``: which of the
    chat's own flags (``CHAT_FLAGS``) this parser takes."""
    keep: dict[str, Any] = {"default": argparse.SUPPRESS} if inner else {}
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="config file (default: $TUI_AGENT_CONFIG, else "
                             "$XDG_CONFIG_HOME/tui-agent/config.toml)", **keep)
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
    parser.add_argument("--trust-project", action="store_true",
                        help="agree to this project's servers and model endpoint "
                             "(.tui-agent/config.toml, .mcp.json, mcp.json); remembered "
                             "until they change", **keep)
    parser.add_argument("--no-project", action="store_true",
                        help="ignore project config files; only the user config and flags",
                        **keep)
    for flag, what in (("--servers", "only these servers"),
                       ("--exclude-servers", "not these servers"),
                       ("--tools", "only these tools (server__tool, or a tool name on any "
                                   "server)"),
                       ("--exclude-tools", "not these tools")):
        parser.add_argument(flag, action="append", metavar="LIST",
                            help=f"{what}: comma-separated, globs allowed; narrows what the "
                                 "config allows, never widens it", **keep)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent",
        description="A terminal chat agent for any LLM, with MCP tools behind an approval gate.",
        epilog="Without a command: the chat app (on a terminal), or one headless turn with "
               "the prompt from stdin. 'tui-agent run --help' for headless use.")
    parser.add_argument("--version", action="version", version=f"tui-agent {__version__}")
    _common(parser)
    parser.add_argument("--demo", action="store_true",
                        help="an offline tour: a scripted model and a bundled MCP server")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run one prompt headless and print the reply",
                         description="Run one turn headless. Exit codes: 0 done, 1 the turn "
                                     "failed or stopped early, 2 bad usage or config.")
    _common(run, inner=True)
    run.add_argument("--approve", choices=("ask", "auto", "deny"), default=None,
                     help="tools that are not auto-approved: ask on the terminal, approve all "
                          "allowed ones, or deny them (default: ask on a terminal, else deny)")
    run.add_argument("--elicit", choices=("ask", "defaults", "decline"), default="ask",
                     help="a server that asks you for input mid-call: ask on the terminal "
                          "(declined without one), accept the form's defaults, or decline "
                          "(default: ask)")
    run.add_argument("--sampling", choices=("allow", "deny"), default="deny",
                     help="let MCP servers use the model (sampling/createMessage); "
                          "default: deny")
    run.add_argument("--attach", action="append", metavar="SERVER:URI",
                     help="put an MCP resource before the prompt (repeatable)")
    run.add_argument("--image", action="append", type=Path, metavar="PATH",
                     help="send an image with the prompt (repeatable); @path in it adds files")
    run.add_argument("--mcp-prompt", nargs="+", metavar=("SERVER:PROMPT", "KEY=VALUE"),
                     help="start from an MCP server's prompt, with its arguments; PROMPT, "
                          "if given too, follows it")
    run.add_argument("--verbose", action="store_true",
                     help="show what MCP servers log (jsonl: server_log events)")
    run.add_argument("--output", choices=("text", "jsonl"), default="text",
                     help="text: the reply on stdout; jsonl: one JSON event per line")
    run.add_argument("--session", type=Path, metavar="FILE",
                     help="session file to write (continued if it exists)")
    run.add_argument("--max-depth", type=int, metavar="N",
                     help="tool-calling rounds one turn may take (default 10)")
    run.add_argument("--compact", action="store_true",
                     help="with --resume: summarize the conversation before PROMPT (or alone)")
    run.add_argument("prompt", nargs="*", metavar="PROMPT",
                     help="the prompt; '-' reads it from stdin")

    servers = sub.add_parser(
        "servers", help="start every configured MCP server and report on it",
        description="Start every configured MCP server, print its state, tools (with their "
                    "approval: auto, ask or deny) and errors, then stop them. Exit 1 if any "
                    "server failed.")
    _common(servers, inner=True, chat=TAKES["servers"])
    servers.add_argument("--resources", action="store_true",
                         help="also list resources, resource templates and prompts")
    servers.add_argument("--stats", nargs="?", const="\0latest", metavar="SESSION",
                         help="do not start anything: print the call metrics of the latest "
                              "conversation (or of SESSION: an id, a prefix or a file) per "
                              "server and tool")

    stubs = sub.add_parser(
        "stubs", help="print the .pyi stubs code mode shows the model",
        description="Start every configured MCP server and print the .pyi stub files a "
                    "code-mode model reads (servers with code_mode = false are left out), "
                    "then stop them. Exit 1 if any server failed.")
    _common(stubs, inner=True, chat=TAKES["stubs"])
    stubs.add_argument("--level", choices=("server", "tool"), default=None,
                       help="one file per server or per tool (default: [code_mode] "
                            "binding_level)")
    stubs.add_argument("--list", action="store_true", help="print only the file names")
    stubs.add_argument("files", nargs="*", metavar="FILE",
                       help="print only these files (e.g. servers/time.pyi)")

    for verb, what in (("login", "log in to a remote MCP server (OAuth): its login page "
                                 "opens in the browser, the link is printed too; the tokens "
                                 "are kept (OS keyring, else the state dir) and renewed"),
                       ("logout", "forget a remote MCP server's tokens and client "
                                  "registration")):
        parser_ = sub.add_parser(verb, help=what.split(":")[0].split(" (")[0],
                                 description=what[0].upper() + what[1:] + ".")
        _common(parser_, inner=True, chat=TAKES[verb])
        parser_.add_argument("name", metavar="NAME", help="the server, as the config names it")

    sessions = sub.add_parser("sessions", help="list saved conversations",
                              description="List saved conversations, newest first: id, "
                                          "when, messages, model and title.")
    sessions.add_argument("--limit", type=int, default=20, metavar="N")

    export = sub.add_parser("export", help="write a conversation as Markdown",
                            description="Write a saved conversation as Markdown (tool calls "
                                        "and results included, secrets masked).")
    export.add_argument("id", metavar="ID", help="session id (or a unique prefix, or a path)")
    export.add_argument("-o", "--output", type=Path, metavar="FILE",
                        help="write here instead of stdout")

    config = sub.add_parser(
        "config", help="where the configuration lives, and what it is once merged",
        description="Print the user config file's path; with --show, the merged "
                    "configuration (defaults < user < project < --config / --mcp-config "
                    "< flags), each value with the file and line it came from, secrets "
                    "masked.")
    _common(config, inner=True, chat=TAKES["config"])
    config.add_argument("--path", action="store_true", help="print the config file path")
    config.add_argument("--show", action="store_true",
                        help="print the merged configuration and where each value came from")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    _run_flags_before_run(parser, words)
    args = parser.parse_args(words)
    if args.command in TAKES:
        for dest, flag in CHAT_FLAGS.items():
            if dest not in TAKES[args.command] and getattr(args, dest, None):
                parser.error(f"{flag} does not apply to 'tui-agent {args.command}' (it is "
                             "for the chat and 'run')")
    try:
        if args.command in ("servers", "stubs", "login", "logout"):
            return cmd_servers(args, sys.stdout, sys.stderr)
        if args.command == "sessions":
            from tui_agent.headless import commands

            return commands.sessions(args.limit, sys.stdout)
        if args.command == "export":
            from tui_agent.headless import commands

            return commands.export(args.id, args.output, sys.stdout, sys.stderr)
        if args.command == "config":
            return cmd_config(args, sys.stdout, sys.stderr)
        if args.command is None and (args.demo or (sys.stdin.isatty()
                                                   and sys.stdout.isatty())):
            return cmd_tui(args, sys.stderr)
        return cmd_run(args, sys.stdin, sys.stdout, sys.stderr)
    except BrokenPipeError:  # `tui-agent run ... | head` closed early: not an error of ours
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # before a session exists (e.g. while litellm imports)
        sys.stderr.write("\ntui-agent: interrupted\n")
        return 130


def _run_flags_before_run(parser: argparse.ArgumentParser, words: list[str]) -> None:
    """``tui-agent --max-depth 3`` would be blamed on "invalid choice: '3'": say instead
    that the flag belongs to ``run``."""
    for word in words:
        if word == "run" or word == "--":
            return
        flag = word.split("=", 1)[0]
        if flag in RUN_ONLY:
            parser.error(f"{flag} is an option of 'run': tui-agent run {flag} ... PROMPT")


def load_settings(args: argparse.Namespace, err: IO[str]) -> Settings | None:
    """The configuration ``--config`` and ``--mcp-config`` name, with its warnings
    printed; None (with the error printed) when it is invalid."""
    from tui_agent.config import ConfigError, load

    try:
        settings = load(args.config, args.mcp_config or [],
                        project=not getattr(args, "no_project", False),
                        trust=bool(getattr(args, "trust_project", False)))
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\n")
        return None
    for warning in settings.warnings:
        err.write(f"tui-agent: warning: {warning}\n")
    if settings.held is not None and args.command != "config":
        from tui_agent.config.show import held_warning

        err.write(f"tui-agent: warning: {held_warning(settings.held)}\n")
    return settings


def apply_flags(settings: Settings, args: argparse.Namespace) -> None:
    """Command-line flags over the config: ``--model``, ``--api-base``, ``--code-mode``."""
    settings.override(model=args.model, api_base=args.api_base,
                      code_mode=bool(getattr(args, "code_mode", None)))


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
                   demo=args.demo, resume=args.resume, trust_project=args.trust_project,
                   no_project=args.no_project, tool_filter=tool_filter(args))


def cmd_config(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``config``: the user config file's path, or (``--show``) the merged configuration."""
    if not args.show:
        from tui_agent.config import paths

        out.write(f"{paths.default_config_file()}\n")
        return 0
    from tui_agent.config.show import render

    settings = load_settings(args, err)
    if settings is None:
        return 2
    apply_flags(settings, args)
    out.write(render(settings))
    return 0


def cmd_tui(args: argparse.Namespace, err: IO[str]) -> int:
    """The chat app. ``--demo`` swaps in the scripted tour and the bundled notes server.
    A config error ends it with exit 2, printed once the terminal is restored."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        err.write("tui-agent: the chat app needs a terminal; for pipes and scripts use "
                  "'tui-agent run PROMPT'\n")
        return 2
    from tui_agent.ui.app import run_app

    return run_app(startup(args), err)


def cmd_run(args: argparse.Namespace, stdin: IO[str], out: IO[str], err: IO[str]) -> int:
    from tui_agent.core.llm import NO_MODEL_HELP, preload
    from tui_agent.headless import run, turn
    from tui_agent.wiring.build import LATEST

    settings = load_settings(args, err)
    if settings is None:
        return turn.EXIT_USAGE
    apply_flags(settings, args)
    chosen = tool_filter(args)
    problem = chosen.narrow(settings)
    if problem:
        err.write(f"tui-agent: {problem}\n")
        return turn.EXIT_USAGE
    if not settings.config.model.name:
        err.write(f"tui-agent: {NO_MODEL_HELP}\n")
        # Bare `tui-agent` on a fresh machine is a first run, not a mistake.
        return turn.EXIT_USAGE if args.command == "run" else 0
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
        verbose=getattr(args, "verbose", False),
        sampling=getattr(args, "sampling", "deny"), attach=getattr(args, "attach", None) or [],
        mcp_prompt=mcp_prompt, max_depth=getattr(args, "max_depth", None), compact=compact,
        images=getattr(args, "image", None) or []), out, err)


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
        code = 130
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)  # a Ctrl-C caught on the way must not end it as a death by SIGINT


if __name__ == "__main__":
    entry()
