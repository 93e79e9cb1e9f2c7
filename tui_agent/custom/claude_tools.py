"""Claude Code's own tools in a hook's matcher, and the tui-agent tools that stand for them.

A Claude Code hook matches its built-in tools by their bare names (``Bash``,
``Edit|Write``); here no tool has such a name (the built-in ones are
``mcp__local__shell``, ``mcp__local__edit``...), so a matcher copied as written would
never fire. :func:`map_matcher` rewrites a matcher to name tui-agent's equivalents and says
what it changed and what has no equivalent; :func:`~tui_agent.custom.hook_import` reports
it. Matchers are read as :class:`~tui_agent.custom.hooks.HookGroup` reads them: letters,
digits, ``_`` and ``|`` are names matched exactly, anything else a regular expression found
anywhere in the name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_agent.custom.hooks import PLAIN

EQUIVALENT: dict[str, str] = {
    "Bash": "mcp__local__shell",
    "BashOutput": "mcp__local__shell_output",
    "TaskOutput": "mcp__local__shell_output",
    "KillShell": "mcp__local__shell_kill",
    "KillBash": "mcp__local__shell_kill",
    "TaskStop": "mcp__local__shell_kill",
    "Read": "mcp__local__read",
    "Write": "mcp__local__write",
    "Edit": "mcp__local__edit",
    "MultiEdit": "mcp__local__edit",
    "Glob": "mcp__local__glob",
    "Grep": "mcp__local__grep",
    "LS": "mcp__local__list",
    "Skill": "mcp__tui-agent__skill",
}
"""Claude Code's tool -> the tui-agent tool that does its job."""
WITHOUT: tuple[str, ...] = (
    "Agent", "Task", "AskUserQuestion", "CronCreate", "CronDelete", "CronList",
    "EnterPlanMode", "ExitPlanMode", "EnterWorktree", "ExitWorktree", "ListMcpResourcesTool",
    "ReadMcpResourceTool", "LSP", "NotebookEdit", "NotebookRead", "PowerShell",
    "SlashCommand", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "TodoRead",
    "TodoWrite", "ToolSearch", "WebFetch", "WebSearch")
"""Claude Code's tools that tui-agent has no equivalent of."""
_PATH = "tool_input has 'path' where Claude Code's has 'file_path'"
INPUT_NOTES = {
    "mcp__local__read": _PATH,
    "mcp__local__write": _PATH,
    "mcp__local__edit": _PATH + ", and one edit a call (no MultiEdit 'edits' list)",
}
"""Where the equivalent's arguments differ from what a Claude Code hook script reads."""
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
"""The events whose matcher names tools."""


@dataclass(frozen=True)
class Mapped:
    """A matcher made to name tui-agent's tools: ``matcher`` (None: nothing of it can fire
    here, so it is not copied), what was renamed, and what has no equivalent."""

    matcher: str | None
    renamed: tuple[tuple[str, str], ...] = ()
    missing: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        """Sentences for the import's report."""
        said = [f"{old} -> {new}" + (f" ({INPUT_NOTES[new]})" if new in INPUT_NOTES else "")
                for old, new in self.renamed]
        if self.missing:
            said.append(f"{', '.join(self.missing)}: Claude Code's own, tui-agent has no "
                        "such tool")
        return said


def fires(matcher: str, name: str) -> bool:
    """Whether ``matcher`` (not empty) matches the tool ``name``, as hooks read it."""
    if PLAIN.fullmatch(matcher):
        return name in matcher.split("|")
    try:
        return re.search(matcher, name) is not None
    except re.error:
        return False


def map_matcher(matcher: str) -> Mapped:
    """``matcher`` with Claude Code's tool names made tui-agent's. A list of names has
    each replaced (one with no equivalent dropped; none left: nothing to copy). A regular
    expression is kept as written, with the equivalents of the Claude Code tools it
    matches added as exact alternatives (``Edit.*`` becomes
    ``Edit.*|^(?:mcp__local__edit)$``), so its other parts still match as they did."""
    if matcher in ("", "*"):
        return Mapped(matcher)
    hits = [n for n in (*EQUIVALENT, *WITHOUT) if fires(matcher, n)]
    missing = tuple(n for n in hits if n not in EQUIVALENT)
    if len(missing) == len(WITHOUT):  # a catch-all (.*): it names no tool in particular
        missing = ()
    renamed = tuple((n, EQUIVALENT[n]) for n in hits
                    if n in EQUIVALENT and not fires(matcher, EQUIVALENT[n]))
    if not hits:
        return Mapped(matcher)
    if PLAIN.fullmatch(matcher):
        names = list(dict.fromkeys(EQUIVALENT.get(n, n) for n in matcher.split("|")
                                   if n and n not in missing))
        return Mapped(_names(names) if names else None, renamed, missing)
    added = list(dict.fromkeys(new for _, new in renamed))
    return Mapped(f"{matcher}|^(?:{'|'.join(added)})$" if added else matcher,
                  renamed, missing)


def _names(names: list[str]) -> str:
    """A matcher naming exactly ``names`` (a name with a character a name list cannot
    hold, the ``-`` of ``mcp__tui-agent__skill``, makes it an anchored expression; tool
    names hold no other character an expression reads specially)."""
    joined = "|".join(names)
    return joined if PLAIN.fullmatch(joined) else f"^(?:{joined})$"
