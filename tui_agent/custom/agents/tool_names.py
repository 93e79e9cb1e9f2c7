"""An agent file's ``tools`` and ``disallowedTools``: written as Claude Code writes them
(``tools: Read, Grep, Glob, Bash``, a comma-separated string) or as a YAML list, each entry
a tool name or a glob over tool names as the model sees them (``time__get_current_time``)
or as rules and hooks name them (``mcp__time__*``).

Claude Code's own tool names are made tui-agent's with the table hook imports use
(:data:`~tui_agent.custom.claude_tools.EQUIVALENT`: ``Read`` is ``mcp__local__read``);
``Agent``/``Task`` is the built-in ``agent`` tool; a name with no equivalent
(``WebFetch``) is left out and named in a note. Claude Code's ``Bash(git *)`` form keeps its
tool (``Bash``): tui-agent's rules, not the file, decide which calls ask.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tui_agent.custom.claude_tools import EQUIVALENT, WITHOUT

AGENT_RULE_NAME = "mcp__tui-agent__agent"
"""The built-in ``agent`` tool as rules name it (Claude Code's ``Agent`` and ``Task``)."""
_CALL = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\((.*)\)$")


@dataclass(frozen=True)
class ToolNames:
    """What a ``tools`` (or ``disallowedTools``) key says: the globs (None: the key is
    absent), and sentences about what was renamed or left out."""

    globs: tuple[str, ...] | None
    notes: tuple[str, ...] = ()


def read_tool_names(value: Any, key: str) -> ToolNames | str:
    """The key's value as globs, or what is wrong with it. Absent or empty (``tools:``
    with nothing after it) is None: every tool; ``[]`` is none."""
    if value is None:
        return ToolNames(None)
    if isinstance(value, str):
        words = [w.strip() for w in value.split(",")]
    elif isinstance(value, list):
        if not all(isinstance(w, str) for w in value):
            return f"'{key}' must list tool names (text), not {value!r}"
        words = [w.strip() for w in value]
    else:
        return f"'{key}' must be a comma-separated list or a YAML list of tool names"
    globs: list[str] = []
    missing: list[str] = []
    kept_tool: list[str] = []
    for word in filter(None, words):
        call = _CALL.match(word)
        name = call.group(1) if call else word
        if call:
            kept_tool.append(word)
        ours = AGENT_RULE_NAME if name in ("Agent", "Task") else EQUIVALENT.get(name)
        if ours is not None:
            globs.append(ours)
        elif name in WITHOUT:
            missing.append(name)
        else:
            globs.append(name)
    notes = []
    if missing:
        notes.append(f"'{key}': {', '.join(missing)} (Claude Code's own) have no "
                     "equivalent in tui-agent and are left out")
    if kept_tool:
        notes.append(f"'{key}': {', '.join(kept_tool)} name the whole tool here (the "
                     "arguments in brackets are not honoured: permission rules decide)")
    return ToolNames(tuple(dict.fromkeys(globs)), tuple(notes))
