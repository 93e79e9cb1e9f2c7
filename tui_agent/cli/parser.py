"""The command line's flags: every command's parser, the flags the chat and ``run`` share
(and which other commands refuse by name), and the checks argparse cannot make itself (a
``run`` flag given before ``run``, a chat flag given to a command it means nothing to).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui_agent import __version__
from tui_agent.config.reasoning import REASONING_EFFORTS

COMMANDS = ("run", "acp", "servers", "stubs", "login", "logout", "sessions", "export", "config",
            "mcp")


CHAT_FLAGS = {"model": "--model", "api_base": "--api-base", "resume": "--resume / -c",
              "code_mode": "--code-mode", "reasoning_effort": "--reasoning-effort"}
"""Flags of the chat and ``run`` (by their destination), which other commands take only
where they mean something."""
TAKES = {"servers": set(), "stubs": set(), "login": set(), "logout": set(), "sessions": set(),
         "export": set(), "config": {"model", "api_base", "code_mode", "reasoning_effort"},
         "mcp": set()}
FILTER_FLAGS = {"servers": "--servers", "exclude_servers": "--exclude-servers",
                "tools": "--tools", "exclude_tools": "--exclude-tools"}
"""The flags that narrow which servers and tools are offered (by their destination)."""
NO_FILTERS = ("login", "logout", "sessions", "export", "mcp")
"""Commands the filters mean nothing to: ``login NAME`` names its one server, the others
start none. Their parsers do not take them, and given before the command they are refused
by name."""
RUN_ONLY = ("--approve", "--elicit", "--sampling", "--attach", "--mcp-prompt", "--verbose",
            "--output", "--session", "--max-depth", "--compact", "--image", "--login",
            "--show-reasoning")


CONFIG_HELP = ("one more config file, read on top of your user config "
               "($TUI_AGENT_CONFIG, else $XDG_CONFIG_HOME/tui-agent/config.toml) and the "
               "project's: its keys win, the others' stay (--config-only reads it alone)")
CONFIG_ONLY_HELP = ("read this config file instead of your user config, and no project "
                    "files: only it (and --mcp-config) and the flags")


def _common(parser: argparse.ArgumentParser, *, inner: bool = False,
            chat: frozenset[str] | set[str] = frozenset(CHAT_FLAGS),
            filters: bool = True) -> None:
    """Flags accepted before and after the command; after it they must not reset
    what was given before it (``tui-agent --config F run ...``). ``chat``: which of the
    chat's own flags (``CHAT_FLAGS``) this parser takes; ``filters``: whether it takes
    ``--servers``, ``--tools`` and their ``--exclude-`` pair."""
    keep: dict[str, Any] = {"default": argparse.SUPPRESS} if inner else {}
    parser.add_argument("--config", type=Path, metavar="FILE", help=CONFIG_HELP, **keep)
    parser.add_argument("--config-only", type=Path, metavar="FILE", help=CONFIG_ONLY_HELP,
                        **keep)
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
    if "reasoning_effort" in chat:
        parser.add_argument("--reasoning-effort", choices=REASONING_EFFORTS, metavar="LEVEL",
                            help="how hard a reasoning model thinks: "
                                 f"{', '.join(REASONING_EFFORTS)} (none turns thinking off; "
                                 "default: the model's reasoning_effort setting)", **keep)
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
                        help="agree to what this project's files (.tui-agent/config.toml, "
                             ".mcp.json, mcp.json) hold until trusted: servers, model, "
                             "roots...; remembered until they change", **keep)
    parser.add_argument("--no-project", action="store_true",
                        help="ignore the project's files (config, servers, AGENTS.md memory); "
                             "only the user's config and memory, and flags",
                        **keep)
    if filters:
        _filters(parser, keep)


def _filters(parser: argparse.ArgumentParser, keep: dict[str, Any]) -> None:
    for flag, what in (("--servers", "only these servers"),
                       ("--exclude-servers", "not these servers"),
                       ("--tools", "only these tools (server__tool, or a tool name on any "
                                   "server)"),
                       ("--exclude-tools", "not these tools")):
        parser.add_argument(flag, action="append", metavar="LIST",
                            help=f"{what}: comma-separated, globs allowed; narrows what the "
                                 "config allows, never widens it", **keep)


def build_parser(words: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line's parser. Given the ``words`` to parse, ``mcp``'s flags
    (and the modules they come from) are only built when ``mcp`` is among them: the
    chat app's first frame does not wait for them."""
    parser = argparse.ArgumentParser(
        prog="tui-agent",
        description="A terminal chat agent for any LLM, with MCP tools behind an approval gate.",
        epilog="Without a command: the chat app (on a terminal), or one headless turn with "
               "the prompt from stdin. 'tui-agent run --help' for headless use.")
    parser.add_argument("--version", action="version", version=f"tui-agent {__version__}")
    _common(parser)
    parser.add_argument("--demo", action="store_true",
                        help="an offline tour: a scripted model and a bundled MCP server")
    parser.add_argument("-p", "--print", dest="print_", action="store_true",
                        help="-p PROMPT is 'run PROMPT': one turn headless, the reply "
                             "printed (what follows -p takes run's flags too)")
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
    run.add_argument("--login", choices=("auto", "browser", "never"), default="auto",
                     help="a remote server that asks for a login (or a wider scope): auto "
                          "opens the browser only on a terminal; browser opens it without "
                          "one too (the link still goes to stderr); never starts none "
                          "(default: auto)")
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
    run.add_argument("--show-reasoning", action="store_true",
                     help="text output: stream the model's thinking to stderr (dim on a "
                          "terminal); jsonl always has it as reasoning events")
    run.add_argument("--session", type=Path, metavar="FILE",
                     help="session file to write (continued if it exists)")
    run.add_argument("--max-depth", type=int, metavar="N",
                     help="tool-calling rounds one turn may take (default 10)")
    run.add_argument("--compact", action="store_true",
                     help="with --resume: summarize the conversation before PROMPT (or alone)")
    run.add_argument("prompt", nargs="*", metavar="PROMPT",
                     help="the prompt; '-' reads it from stdin")

    acp = sub.add_parser("acp", help="serve the Agent Client Protocol on stdio (for editors)",
                         description="Run as an ACP agent for an editor (Zed, JetBrains, "
                                     "Neovim...): JSON-RPC on stdin/stdout, logs on stderr.")
    _common(acp, inner=True)

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
        _common(parser_, inner=True, chat=TAKES[verb], filters=False)
        parser_.add_argument("name", metavar="NAME", help="the server, as the config names it")

    sessions = sub.add_parser("sessions", help="list saved conversations",
                              description="List saved conversations, newest first: id, "
                                          "when, messages, model and title.")
    sessions.add_argument("--limit", type=int, default=20, metavar="N",
                          help="list at most N conversations, the newest (default: 20)")

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
    if words is not None and "mcp" not in words:
        sub.add_parser("mcp", help=MCP_HELP)  # listed in --help; never parsed this time
        return parser
    from tui_agent.cli.mcp_parser import add_mcp

    add_mcp(sub, _common, MCP_HELP)
    return parser


MCP_HELP = "add, remove, list and import MCP servers"


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
    (Python hands it over as a lone surrogate, ``\\udcff``) as ``\\xff``, another lone
    surrogate as ``\\ud800``, a control character as its escape."""
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char if char.isprintable() else
                       char.encode("unicode_escape").decode("ascii"))
    return "".join(out)


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
