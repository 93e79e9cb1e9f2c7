"""Slash commands: the table the prompt, ``/help`` and the command palette share.

Pure Python (no Textual), so parsing is tested on its own. An MCP prompt is
offered as ``/server:prompt key=value ...``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from tui_agent.wiring.mcp_context import prompt_arguments


@dataclass(frozen=True)
class CommandInfo:
    name: str
    usage: str
    help: str
    key: str = ""


COMMANDS: tuple[CommandInfo, ...] = (
    CommandInfo("help", "/help", "keys, commands and MCP prompts", "f1"),
    CommandInfo("model", "/model [NAME [URL]]", "choose the model for the next turn (any "
                "litellm string; URL: the server it is at)", "ctrl+t"),
    CommandInfo("think", "/think [LEVEL]", "how hard a reasoning model thinks: none ... high, "
                "default"),
    CommandInfo("servers", "/servers", "MCP servers: state, errors, tools and their approval; "
                "reconnect, enable, disable", "ctrl+s"),
    CommandInfo("mcp", "/mcp add NAME ...", "add an MCP server: NAME -- COMMAND, or NAME "
                "--url URL"),
    CommandInfo("tools", "/tools", "switch servers and tools on and off for this "
                "conversation"),
    CommandInfo("permissions", "/permissions", "the permission rules (allow, ask, deny) "
                "with their files, and the mode; remove a rule"),
    CommandInfo("add-dir", "/add-dir DIR", "let the tools work in another folder too, "
                "for this session (as --add-dir)"),
    CommandInfo("new", "/new", "start a new conversation", "ctrl+n"),
    CommandInfo("resume", "/resume [ID|all]", "continue a saved conversation (this "
                "project's; all: every folder's)"),
    CommandInfo("rewind", "/rewind", "go back to before one of your messages (a new "
                "branch), and restore the files the built-in tools changed"),
    CommandInfo("export", "/export [FILE]", "write this conversation as Markdown"),
    CommandInfo("compact", "/compact [WHAT TO KEEP]", "summarize older messages for the "
                "model now"),
    CommandInfo("context", "/context", "what the next request takes of the context window"),
    CommandInfo("skills", "/skills", "the Agent Skills on offer: origin, state, tokens; "
                "the broken ones and why"),
    CommandInfo("agents", "/agents", "the sub-agents the model can hand a task to: model, "
                "tools, file; the agent files not used and why"),
    CommandInfo("memory", "/memory [N|user|project]", "the AGENTS.md files read; open one "
                "in $EDITOR"),
    CommandInfo("init", "/init", "the model drafts the project's AGENTS.md; written once "
                "you approve its diff"),
    CommandInfo("clear", "/clear", "clear the screen (the conversation goes on)", "ctrl+l"),
    CommandInfo("mode", "/mode [default|plan|auto]", "the permission mode: ask as the rules "
                "say, plan (read-only), or auto (run every tool not denied)", "shift+tab"),
    CommandInfo("code", "/code", "switch code mode on or off for the next turn"),
    CommandInfo("theme", "/theme [NAME]", "choose a theme"),
    CommandInfo("attach", "/attach [SERVER:URI]", "attach an MCP resource to the next message"),
    CommandInfo("image", "/image [PATH]", "attach an image to the next message (alone: drop "
                "the images waiting)"),
    CommandInfo("copy", "/copy [N]", "copy the last reply (or the N-th last) to the clipboard"),
    CommandInfo("edit", "/edit", "write the prompt in $EDITOR", "ctrl+e"),
    CommandInfo("quit", "/quit", "leave (the conversation is saved)", "ctrl+q"),
)
BY_NAME = {c.name: c for c in COMMANDS}


@dataclass(frozen=True)
class Command:
    """A parsed slash command. ``prompt`` is set for ``/server:prompt`` (an MCP prompt);
    ``ask``: ask for all its arguments in a form first (the palette has nowhere to type
    them)."""

    name: str
    arg: str = ""
    server: str = ""
    prompt: str = ""
    arguments: dict[str, str] = field(default_factory=dict)
    ask: bool = False


class CommandError(ValueError):
    pass


def parse(text: str) -> Command | None:
    """The command in ``text``, or None when it is a message to send.

    ``/usr/bin/env is missing`` is a message, not a command: a first word with
    another ``/`` in it is a path."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    if not head or "/" in head:
        return None
    if ":" in head:
        server, _, prompt = head.partition(":")
        if not server or not prompt:
            raise CommandError(f"/{head}: an MCP prompt is /SERVER:PROMPT [key=value ...]")
        return Command("prompt", rest.strip(), server, prompt, _pairs(rest, head))
    name = head.lower()
    if name not in BY_NAME:
        known = ", ".join(f"/{c.name}" for c in COMMANDS)
        raise CommandError(f"unknown command /{head} (commands: {known}; send //{head} ... "
                           "to send a message that starts with /)")
    return Command(name, rest.strip())


def _pairs(rest: str, head: str) -> dict[str, str]:
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise CommandError(f"/{head}: {exc}") from None
    try:
        return prompt_arguments(words)
    except ValueError as exc:
        raise CommandError(f"/{head}: {exc}") from None


def unescape(text: str) -> str:
    """A message that began with ``//`` is sent with one ``/``."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text


@dataclass(frozen=True)
class MenuEntry:
    """One line of the ``/`` completion menu: ``name`` is what follows the ``/``
    (``review``, ``server:prompt``); ``hint`` its arguments; ``about`` what it does;
    ``kind`` where it comes from (empty for a built-in: ``user``, ``project:frontend``,
    ``skill``, ``MCP``). Text from files and servers is cleaned by whoever makes it."""

    name: str
    hint: str = ""
    about: str = ""
    kind: str = ""


def built_in_entries() -> list[MenuEntry]:
    """The built-in commands as menu lines (the usage's arguments as the hint)."""
    return [MenuEntry(c.name, c.usage.partition(" ")[2], c.help) for c in COMMANDS]


MENU_LIMIT = 50
"""The most lines the menu holds (it scrolls; typing narrows it)."""


def matching(typed: str, entries: list[MenuEntry]) -> list[MenuEntry]:
    """The entries for ``typed`` (what follows the ``/``, case ignored): the one named
    exactly that (``/mode`` is not ``/model``: enter runs it), then those whose name starts
    with it, then those whose name holds it elsewhere, each in the given order."""
    word = typed.lower()
    first = sorted((e for e in entries if e.name.lower().startswith(word)),
                   key=lambda e: e.name.lower() != word)
    inside = [e for e in entries if word and word in e.name.lower() and e not in first]
    return (first + inside)[:MENU_LIMIT]
