"""What an editor is told of a tool call: its title, its ``kind`` (the icon and the
grouping an editor gives it) and the paths it touches.

The kind comes from what the call is (a code-mode script executes; a call the diff rule
of :mod:`tui_agent.core.diffs` says writes a file edits), then the server's hints, then
the words of the tool's name. It is a presentation hint only: the gate never trusts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from tui_agent.core.diffs import writes_file
from tui_agent.tools.text import clean

Kind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch",
               "switch_mode", "other"]
SCRIPT_TOOL = "executeToolCode"
SKILL_TOOL = "skill"
_WORDS: tuple[tuple[tuple[str, ...], Kind], ...] = (
    (("delete", "remove", "unlink", "rmdir"), "delete"),
    (("move", "rename"), "move"),
    (("search", "grep", "find", "query"), "search"),
    (("fetch", "http", "url", "download", "browse"), "fetch"),
    (("run", "exec", "shell", "command", "bash"), "execute"),
    (("read", "get", "list", "show", "view", "cat", "describe", "stat"), "read"),
)
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "source", "destination")


def kind_of(tool: str, arguments: dict[str, Any], hints: Sequence[str] = ()) -> Kind:
    """The ACP kind of a call of ``tool`` (its name on its server) with ``arguments``."""
    if tool == SCRIPT_TOOL:
        return "execute"
    if tool == SKILL_TOOL:  # the built-in skill tool reads a skill's files
        return "read"
    if writes_file(tool, arguments):
        return "edit"
    if "read-only" in hints:
        return "read"
    low = tool.lower()
    for words, kind in _WORDS:
        if any(word in low for word in words):
            return kind
    return "other"


def title_of(name: str, server: str | None, tool: str, parent: str | None = None) -> str:
    """``server: tool``, or the script's own line; a call from a script says so."""
    if name == SCRIPT_TOOL:
        return "code-mode script"
    what = f"{clean(server)}: {clean(tool)}" if server else clean(name)
    return f"{what} (called by the script {clean(parent)})" if parent else what


def paths_of(arguments: dict[str, Any], cwd: Path) -> list[str]:
    """The absolute paths a call names (``path``, ``file_path`` ...), for ``locations``."""
    found = []
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value and "\n" not in value and len(value) < 4096:
            found.append(str((cwd / value) if not Path(value).is_absolute() else Path(value)))
    return found
