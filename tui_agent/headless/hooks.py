"""``tui-agent hooks list`` (the hooks configured, with their files and lines, a held
project's marked as such) and ``tui-agent hooks import`` (Claude Code's hooks copied into
tui-agent's config: :mod:`tui_agent.custom.hook_import`)."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from tui_agent.config import ConfigError, Settings, paths
from tui_agent.config.printable import clean
from tui_agent.config.project import find_project
from tui_agent.custom.hook_import import Imported, add_to_toml, claude_files, home, read_claude
from tui_agent.custom.hooks import parse_hooks


def list_hooks(settings: Settings, out: IO[str]) -> int:
    """Each hook: event, matcher, command, timeout and ``file:line``."""
    config = parse_hooks(settings.hooks)
    for group in config.groups:
        for hook in group.hooks:
            out.write(clean(f"{group.event:<18} {group.matcher or '*':<20} {hook.command}  "
                            f"(timeout {hook.timeout:g} s; {hook.place()})") + "\n")
    held = settings.held.keys.get("hooks") if settings.held is not None else None
    if held is not None:
        out.write(clean(f"held until the project is trusted: the hooks of {held[1].file}")
                  + "\n")
    if not config.groups and held is None:
        out.write("no hooks configured\n")
    return 0


def import_hooks(out: IO[str], err: IO[str], cwd: Path | None = None) -> int:
    """Copy the hooks of Claude Code's settings (the user's and the project's personal
    ``settings.local.json`` into the user config, the project's shared ones into its
    ``.tui-agent/config.toml``); 0 done, 2 a file that cannot be read or written."""
    cwd = cwd or Path.cwd()
    found = find_project(cwd)
    root = found.root if found is not None else cwd
    report = Imported()
    files = claude_files(home(), root)
    if not files:
        out.write("no Claude Code settings with hooks found (~/.claude/settings.json, "
                  ".claude/settings.json, .claude/settings.local.json)\n")
        return 0
    user = paths.default_config_file()
    try:
        for scope, path in files:
            target = root / ".tui-agent" / "config.toml" if scope == "project" else user
            hooks = read_claude(path, report)
            add_to_toml(target, hooks, report, path)
            if scope == "local" and hooks:
                report.mapped.append(f"{path} is personal (not committed): its hooks "
                                     f"went to your user config, {user}, and run in "
                                     "every project")
    except ConfigError as exc:
        err.write(f"tui-agent: {clean(str(exc))}\n")
        return 2
    for line in report.added:
        out.write(clean(f"added {line}") + "\n")
    for line in report.mapped:
        out.write(clean(f"note: {line}") + "\n")
    for line in report.already:
        out.write(clean(f"already there: {line}") + "\n")
    for line in report.skipped:
        out.write(clean(f"not imported: {line}") + "\n")
    if not (report.added or report.already or report.skipped):
        out.write("no hooks in Claude Code's settings\n")
    return 0
