"""``[hooks]`` in Claude Code's shape, read from each config file into frozen data with the
file and line each hook came from.

Claude Code's ``settings.json`` has ``{"hooks": {"PreToolUse": [{"matcher": "Bash",
"hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}``; the same shape in
TOML is ``[[hooks.PreToolUse]]`` with ``matcher`` and ``hooks = [{ type = "command", ...}]``.
A matcher omitted, ``""`` or ``"*"`` matches everything; as in Claude Code, one of letters,
digits, ``_`` and ``|`` only is a name or a list of names matched exactly (``Write``,
``Edit|Write``), and any other is a regular expression found anywhere in the name
(``mcp__memory__.*``, ``mcp__.*write``), the tool's name as Claude Code names MCP tools
(``mcp__SERVER__TOOL``), or the ``source``/``trigger``/``notification_type`` of the events
that have one. Layers concatenate (the user's, then the project's once trusted);
one command given twice for an event runs once.

Anything this tui-agent cannot honour (an unknown event, a hook ``type`` other than
``command``, a matcher that does not compile) refuses the whole configuration with a
:class:`~tui_agent.config.errors.ConfigError` naming the file and line: a guard that
silently did not run would be worse than none. The loader hands the raw tables over
(:class:`~tui_agent.config.hook_tables.HookTable`); running the hooks is
:mod:`tui_agent.core.hooks`'s job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.config.errors import ConfigError
from tui_agent.config.hook_tables import HookTable
from tui_agent.config.locate import toml_line

EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
          "SubagentStart", "SubagentStop", "SessionStart", "SessionEnd", "PreCompact",
          "Notification")
"""The events tui-agent fires, named as Claude Code names them."""
MATCHED_ON = {"PreToolUse": "tool_name", "PostToolUse": "tool_name",
              "PostToolUseFailure": "tool_name", "SessionStart": "source",
              "PreCompact": "trigger", "Notification": "notification_type",
              "SubagentStart": "agent_type", "SubagentStop": "agent_type"}
"""What an event's matcher is matched against; the other events ignore their matcher, as
Claude Code's do."""
DEFAULT_TIMEOUT = 60.0
"""Seconds a hook may run when it sets no ``timeout`` (Claude Code's default)."""
_ANY = ("", "*")
_HOOK_KEYS = {"type", "command", "timeout"}


@dataclass(frozen=True)
class HookCommand:
    """One hook: a shell command run with the event's JSON on its stdin."""

    command: str
    timeout: float = DEFAULT_TIMEOUT
    file: Path | None = None
    line: int | None = None

    def place(self) -> str:
        """``file:line`` of the hook, for people."""
        if self.file is None:
            return "<hooks>"
        return f"{self.file}:{self.line}" if self.line else str(self.file)


PLAIN = re.compile(r"[A-Za-z0-9_|]+")
"""A matcher Claude Code reads as names, not as a regular expression."""


@dataclass(frozen=True)
class HookGroup:
    """One ``[[hooks.EVENT]]`` entry: a matcher and the hooks it runs."""

    event: str
    matcher: str
    hooks: tuple[HookCommand, ...]
    file: Path | None = None
    line: int | None = None
    pattern: re.Pattern[str] | None = None
    """The compiled matcher; None matches everything."""

    def matches(self, subject: str | None) -> bool:
        if self.pattern is None or self.event not in MATCHED_ON:
            return True
        if subject is None:
            return False
        if PLAIN.fullmatch(self.matcher):  # names: exact, as Claude Code reads them
            return subject in self.matcher.split("|")
        return self.pattern.search(subject) is not None


@dataclass(frozen=True)
class HookConfig:
    """Every hook configured, in the order of the files (user first) and of each file."""

    groups: tuple[HookGroup, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.groups)

    def commands(self, event: str, subject: str | None = None) -> tuple[HookCommand, ...]:
        """The hooks ``event`` runs for ``subject`` (a tool name, a source...), each
        command once (the first one's timeout and place kept)."""
        seen: dict[str, HookCommand] = {}
        for group in self.groups:
            if group.event == event and group.matches(subject):
                for hook in group.hooks:
                    seen.setdefault(hook.command, hook)
        return tuple(seen.values())

    def has(self, event: str) -> bool:
        return any(g.event == event for g in self.groups)


def parse_hooks(tables: Sequence[HookTable]) -> HookConfig:
    """Every file's ``hooks`` table as one :class:`HookConfig`. Raises
    :class:`ConfigError` naming the file and line of the first file with a problem
    (all of that file's problems listed)."""
    groups: list[HookGroup] = []
    for table in tables:
        groups += _file_groups(table)
    return HookConfig(tuple(groups))


def _file_groups(table: HookTable) -> list[HookGroup]:
    problems: list[str] = []
    groups: list[HookGroup] = []
    if not isinstance(table.value, Mapping):
        raise ConfigError(f"{_at(table, ('hooks',))}'hooks' must be a table of events",
                          table.file)
    for event, entries in table.value.items():
        if event not in EVENTS:
            problems.append(f"{_at(table, ('hooks', event))}unknown hook event '{event}' "
                            f"(tui-agent has: {', '.join(EVENTS)})")
            continue
        if not isinstance(entries, list):
            problems.append(f"{_at(table, ('hooks', event))}hooks.{event} must be a list "
                            "of [[hooks." + event + "]] entries")
            continue
        lines = _entry_lines(table.text, event)
        for index, entry in enumerate(entries):
            line = lines[index] if index < len(lines) else toml_line(
                table.text, ("hooks", event))
            group = _group(table.file, event, entry, line, problems)
            if group is not None:
                groups.append(group)
    if problems:
        raise ConfigError(problems, table.file)
    return groups


def _group(file: Path, event: str, entry: Any, line: int | None,
           problems: list[str]) -> HookGroup | None:
    at = f"line {line}: " if line else ""
    if not isinstance(entry, Mapping):
        problems.append(f"{at}each hooks.{event} entry must be a table with 'hooks'")
        return None
    stray = sorted(set(entry) - {"matcher", "hooks"})
    if stray:
        problems.append(f"{at}hooks.{event}: unknown key '{stray[0]}' (an entry has "
                        "'matcher' and 'hooks')")
        return None
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        problems.append(f"{at}hooks.{event}: 'matcher' must be a string")
        return None
    pattern = None
    if matcher not in _ANY:
        try:
            pattern = re.compile(matcher)
        except re.error as exc:
            problems.append(f"{at}hooks.{event}: matcher '{matcher}' is not a valid "
                            f"regular expression: {exc}")
            return None
    hooks = entry.get("hooks")
    if not isinstance(hooks, list) or not hooks:
        problems.append(f"{at}hooks.{event}: 'hooks' must be a list of "
                        "{ type = \"command\", command = \"...\" } tables")
        return None
    commands = [_command(file, event, hook, line, problems) for hook in hooks]
    if any(c is None for c in commands):
        return None
    return HookGroup(event, matcher, tuple(c for c in commands if c is not None), file,
                     line, pattern)


def _command(file: Path, event: str, hook: Any, line: int | None,
             problems: list[str]) -> HookCommand | None:
    at = f"line {line}: " if line else ""
    if not isinstance(hook, Mapping):
        problems.append(f"{at}hooks.{event}: a hook must be a table with 'type' and "
                        "'command'")
        return None
    kind = hook.get("type", "command")
    if kind != "command":
        problems.append(f"{at}hooks.{event}: hook type '{kind}' is not supported yet "
                        "(only \"command\")")
        return None
    stray = sorted(set(hook) - _HOOK_KEYS)
    if stray:
        problems.append(f"{at}hooks.{event}: unknown hook key '{stray[0]}' (a hook has "
                        "'type', 'command' and 'timeout')")
        return None
    command, timeout = hook.get("command"), hook.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(command, str) or not command.strip():
        problems.append(f"{at}hooks.{event}: 'command' must be a non-empty string")
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        problems.append(f"{at}hooks.{event}: 'timeout' must be a number of seconds above 0")
        return None
    return HookCommand(command, float(timeout), file, line)


def _entry_lines(text: str, event: str) -> list[int]:
    """The line of each ``[[hooks.EVENT]]`` header, in order."""
    header = re.compile(r"^\s*\[\[\s*hooks\s*\.\s*[\"']?" + re.escape(event)
                        + r"[\"']?\s*\]\]")
    return [n for n, line in enumerate(text.splitlines(), start=1) if header.match(line)]


def _at(table: HookTable, path: tuple[str, ...]) -> str:
    line = toml_line(table.text, path) if table.text else None
    return f"line {line}: " if line else ""
