"""``tui-agent hooks import``: the hooks of Claude Code's settings files copied into
tui-agent's config, so the scripts people already have run here unchanged.

Claude Code keeps hooks in ``~/.claude/settings.json`` (the user's) and in a project's
``.claude/settings.json`` (shared, committed) and ``.claude/settings.local.json``
(personal, not committed). The user's and the personal ones go into the user config
(tui-agent has no personal file per project, and the project's config is shared), the
shared ones into the project's ``.tui-agent/config.toml`` (held, like every project hook,
until the project is trusted). The TOML is edited with tomlkit, so comments and layout
stay; a hook already there (same event, matcher and command) is not added again, and
what cannot be mapped (an event tui-agent does not have, a hook of another type than
``command``, a matcher that does not compile) is reported, not copied. A matcher naming
Claude Code's own tools (``Bash``, ``Edit|Write``) is copied naming tui-agent's
equivalents (:mod:`~tui_agent.custom.claude_tools`), and the renaming reported; one that
names only tools tui-agent does not have is not copied.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.config.atomic import write_text
from tui_agent.config.errors import ConfigError
from tui_agent.custom.claude_tools import TOOL_EVENTS, map_matcher
from tui_agent.custom.hooks import EVENTS


@dataclass
class Imported:
    """What one import did, for people."""

    added: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    mapped: list[str] = field(default_factory=list)
    """Matchers copied naming tui-agent's tools where Claude Code's named its own."""


def claude_files(home: Path, project: Path | None) -> list[tuple[str, Path]]:
    """Claude Code's settings files that exist, each with its scope (``user``,
    ``project``, or ``local``: the project's personal file)."""
    files = [("user", home / ".claude" / "settings.json")]
    if project is not None and project != home:
        files += [("project", project / ".claude" / "settings.json"),
                  ("local", project / ".claude" / "settings.local.json")]
    return [(scope, path) for scope, path in files if path.is_file()]


def read_claude(path: Path, report: Imported) -> list[tuple[str, str, dict[str, Any]]]:
    """The hooks of one settings file that tui-agent can run, as ``(event, matcher,
    hook)``; the others are added to ``report.skipped`` with why. Raises
    :class:`ConfigError` when the file is not JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read Claude Code's settings: {exc}", path) from None
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found: list[tuple[str, str, dict[str, Any]]] = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        if event not in EVENTS:
            report.skipped.append(f"{path}: {event}: tui-agent has no such event")
            continue
        for group in groups if isinstance(groups, list) else ():
            matcher = group.get("matcher", "") if isinstance(group, dict) else ""
            matcher = "" if matcher == "*" else matcher  # both: every tool
            if not _compiles(matcher):
                report.skipped.append(f"{path}: {event}: matcher {matcher!r} is not a "
                                      "regular expression Python reads")
                continue
            if event in TOOL_EVENTS and (matcher := _mapped(path, event, matcher,
                                                            report)) is None:
                continue
            for hook in group.get("hooks") or () if isinstance(group, dict) else ():
                kind = hook.get("type") if isinstance(hook, dict) else None
                command = hook.get("command") if isinstance(hook, dict) else None
                if kind != "command" or not isinstance(command, str):
                    report.skipped.append(f"{path}: {event}: a hook of type {kind!r} "
                                          "(only \"command\" hooks run here)")
                    continue
                kept = {"type": "command", "command": command}
                if isinstance(hook.get("timeout"), int | float):
                    kept["timeout"] = hook["timeout"]
                found.append((event, matcher if isinstance(matcher, str) else "", kept))
    return found


def add_to_toml(target: Path, hooks: list[tuple[str, str, dict[str, Any]]],
                report: Imported, origin: Path) -> None:
    """Append ``hooks`` to the TOML config ``target`` (created if missing) as
    ``[[hooks.EVENT]]`` entries, comments kept; one already there is not added again."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        text = target.read_text(encoding="utf-8") if target.exists() else ""
        doc = tomlkit.parse(text)
    except (OSError, TOMLKitError) as exc:
        raise ConfigError(f"cannot read it to add hooks: {exc}", target) from None
    table = doc.get("hooks")
    if table is None:
        table = tomlkit.table(is_super_table=True)
        doc["hooks"] = table
    for event, matcher, hook in hooks:
        shown = f"{event} {matcher or '*'}: {hook['command']} (from {origin})"
        entries = table.get(event)
        if entries is not None and _has(entries, matcher, hook["command"]):
            report.already.append(shown)
            continue
        entry = tomlkit.table()
        if matcher:
            entry["matcher"] = matcher
        inline = tomlkit.inline_table()
        inline.update(hook)
        array = tomlkit.array()
        array.append(inline)
        entry["hooks"] = array
        if entries is None:
            entries = tomlkit.aot()
            table[event] = entries
        entries.append(entry)
        report.added.append(shown)
    new = tomlkit.dumps(doc)
    if new != text:
        write_text(target, new)


def _mapped(path: Path, event: str, matcher: str, report: Imported) -> str | None:
    """``matcher`` naming tui-agent's tools (reported when it changed), or None when it
    names only Claude Code's own tools, which no call here matches (reported)."""
    mapped = map_matcher(matcher)
    said = "; ".join(mapped.notes())
    if mapped.matcher is None:
        report.skipped.append(f"{path}: {event}: matcher {matcher!r} names only Claude "
                              f"Code's own tools ({said})")
    elif said:
        report.mapped.append(f"{path}: {event}: matcher {matcher!r} copied as "
                             f"{mapped.matcher!r} ({said})")
    return mapped.matcher


def _has(entries: Any, matcher: str, command: str) -> bool:
    return any((e.get("matcher", "") or "") == matcher and any(
        isinstance(h, Mapping) and h.get("command") == command for h in e.get("hooks", ()))
        for e in entries if isinstance(e, Mapping))


def _compiles(matcher: Any) -> bool:
    if not isinstance(matcher, str):
        return False
    if matcher == "":
        return True
    try:
        re.compile(matcher)
    except re.error:
        return False
    return True


def home(env: Mapping[str, str] = os.environ) -> Path:
    return Path(env.get("HOME") or Path.home())
