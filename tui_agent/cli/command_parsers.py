"""Each command's parser (``run``, ``acp``, ``servers``...), built only when its name is
among the words to parse: the chat app's first frame does not wait for flags it will not
read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_agent.cli.flags import TAKES, common


def _run(sub: Any, name: str, what: str) -> None:
    run = sub.add_parser(name, help=what,
                         description="Run one turn headless. Exit codes: 0 done, 1 the turn "
                                     "failed or stopped early, 2 bad usage or config.")
    common(run, inner=True)
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


def _acp(sub: Any, name: str, what: str) -> None:
    acp = sub.add_parser(name, help=what,
                         description="Run as an ACP agent for an editor (Zed, JetBrains, "
                                     "Neovim...): JSON-RPC on stdin/stdout, logs on stderr.")
    common(acp, inner=True)
    acp.add_argument("--terminal-login", action="store_true",
                     help="log in for the model in this terminal and end: asks for its key "
                          "(not shown) and keeps it, in the keyring or the state folder "
                          "(what an editor's terminal login runs)")


def _servers(sub: Any, name: str, what: str) -> None:
    servers = sub.add_parser(
        name, help=what,
        description="Start every configured MCP server, print its state, tools (with their "
                    "approval: auto, ask or deny) and errors, then stop them. Exit 1 if any "
                    "server failed.")
    common(servers, inner=True, chat=TAKES["servers"])
    servers.add_argument("--resources", action="store_true",
                         help="also list resources, resource templates and prompts")
    servers.add_argument("--stats", nargs="?", const="\0latest", metavar="SESSION",
                         help="do not start anything: print the call metrics of the latest "
                              "conversation (or of SESSION: an id, a prefix or a file) per "
                              "server and tool")


def _stubs(sub: Any, name: str, what: str) -> None:
    stubs = sub.add_parser(
        name, help=what,
        description="Start every configured MCP server and print the .pyi stub files a "
                    "code-mode model reads (servers with code_mode = false are left out), "
                    "then stop them. Exit 1 if any server failed.")
    common(stubs, inner=True, chat=TAKES["stubs"])
    stubs.add_argument("--level", choices=("server", "tool"), default=None,
                       help="one file per server or per tool (default: [code_mode] "
                            "binding_level)")
    stubs.add_argument("--list", action="store_true", help="print only the file names")
    stubs.add_argument("files", nargs="*", metavar="FILE",
                       help="print only these files (e.g. servers/time.pyi)")


def _login(sub: Any, name: str, what: str) -> None:
    """``login`` and ``logout`` (``what``: the long help; its first clause is the short)."""
    parser_ = sub.add_parser(name, help=what.split(":")[0].split(" (")[0],
                             description=what[0].upper() + what[1:] + ".")
    common(parser_, inner=True, chat=TAKES[name], filters=False)
    parser_.add_argument("name", metavar="NAME", help="the server, as the config names it")


def _sessions(sub: Any, name: str, what: str) -> None:
    sessions = sub.add_parser(name, help=what,
                              description="List saved conversations, newest first: id, "
                                          "when, messages, model and title.")
    sessions.add_argument("--limit", type=int, default=20, metavar="N",
                          help="list at most N conversations, the newest (default: 20)")


def _skills(sub: Any, name: str, what: str) -> None:
    skills = sub.add_parser(
        name, help=what,
        description="List the Agent Skills found in the user's folders and, in a trusted "
                    "project, the project's: name, origin, tokens, description, and the "
                    "ones not offered with the file, line and why. Exit 1 if any skill is "
                    "broken.")
    skills.add_argument("--mcp", action="store_true",
                        help="also start the configured MCP servers and list the skills "
                             "they serve (no skill file is read)")
    common(skills, inner=True, chat=TAKES[name], filters=False)


def _agents(sub: Any, name: str, what: str) -> None:
    agents = sub.add_parser(
        name, help=what,
        description="List the agents the model may start with the agent tool: the built-in "
                    "general one, then the agent files found in the user's folders and, in a "
                    "trusted project, the project's (name, origin, model, tools, file), and "
                    "the files that could not be used, with the file, line and why. Exit 1 "
                    "if any agent file has a problem.")
    common(agents, inner=True, chat=TAKES[name], filters=False)


def _export(sub: Any, name: str, what: str) -> None:
    export = sub.add_parser(name, help=what,
                            description="Write a saved conversation as Markdown (tool calls "
                                        "and results included, secrets masked).")
    export.add_argument("id", metavar="ID", help="session id (or a unique prefix, or a path)")
    export.add_argument("-o", "--output", type=Path, metavar="FILE",
                        help="write here instead of stdout")


def _config(sub: Any, name: str, what: str) -> None:
    config = sub.add_parser(
        name, help=what,
        description="Print the user config file's path; with --show, the merged "
                    "configuration (defaults < user < project < --config / --mcp-config "
                    "< flags), each value with the file and line it came from, secrets "
                    "masked.")
    common(config, inner=True, chat=TAKES["config"])
    config.add_argument("--path", action="store_true", help="print the config file path")
    config.add_argument("--show", action="store_true",
                        help="print the merged configuration and where each value came from")


def _mcp(sub: Any, name: str, what: str) -> None:
    from tui_agent.cli.mcp_parser import add_mcp

    add_mcp(sub, common, what)


def _tools(sub: Any, name: str, what: str) -> None:
    tools = sub.add_parser(name, help=what,
                           description="tui-agent's own tools (read, list, glob, grep, edit, "
                                       "write...), served over MCP.")
    inner = tools.add_subparsers(dest="tools_command", metavar="COMMAND", required=True)
    serve = inner.add_parser(
        "serve", help="run the built-in MCP server on stdio",
        description="Run the built-in MCP server on stdio (the chat, run and acp start it "
                    "as the server 'local'). Its tools touch only its roots: the client's "
                    "MCP roots and the --root folders (the working directory when there "
                    "are none).")
    serve.add_argument("--root", action="append", type=Path, metavar="DIR",
                       help="a folder the tools may touch (repeatable), beside the "
                            "client's roots")


def _hooks(sub: Any, name: str, what: str) -> None:
    hooks = sub.add_parser(name, help=what,
                           description="Hooks in Claude Code's format: commands run at tool "
                                       "calls, prompts and session events ([hooks]).")
    inner = hooks.add_subparsers(dest="hooks_command", metavar="COMMAND", required=True)
    listed = inner.add_parser("list", help="the hooks configured, with their files",
                              description="List every hook: event, matcher, command, "
                                          "timeout, and the file and line it is in.")
    common(listed, inner=True, chat=TAKES[name], filters=False)
    inner.add_parser(
        "import", help="copy the hooks of Claude Code's settings files",
        description="Copy the hooks of ~/.claude/settings.json into your user config and "
                    "those of the project's .claude/settings.json and "
                    ".claude/settings.local.json into its .tui-agent/config.toml (comments "
                    "kept; a hook already there is not added twice); report what cannot be "
                    "mapped.")


LOGIN = ("log in to a remote MCP server (OAuth): its login page opens in the browser, the "
         "link is printed too; the tokens are kept (OS keyring, else the state dir) and renewed")
LOGOUT = "forget a remote MCP server's tokens and client registration"
MCP_HELP = "add, remove, list and import MCP servers"
COMMAND_PARSERS: dict[str, tuple[str, Callable[[Any, str, str], None]]] = {
    "run": ("run one prompt headless and print the reply", _run),
    "acp": ("serve the Agent Client Protocol on stdio (for editors)", _acp),
    "servers": ("start every configured MCP server and report on it", _servers),
    "stubs": ("print the .pyi stubs code mode shows the model", _stubs),
    "login": (LOGIN, _login),
    "logout": (LOGOUT, _login),
    "sessions": ("list saved conversations", _sessions),
    "skills": ("list the Agent Skills found (SKILL.md folders)", _skills),
    "agents": ("list the sub-agents found (agent files)", _agents),
    "export": ("write a conversation as Markdown", _export),
    "config": ("where the configuration lives, and what it is once merged", _config),
    "mcp": (MCP_HELP, _mcp),
    "tools": ("serve tui-agent's built-in tools over MCP (tools serve)", _tools),
    "hooks": ("list the hooks, or import Claude Code's (hooks list, hooks import)", _hooks),
}
"""Each command's parser, built only when its name is among the words to parse (the others
are listed in ``--help`` by name and help only): the chat app's first frame does not wait
for flags it will not read."""
