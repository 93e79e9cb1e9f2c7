"""The ``/name`` commands users wrote (command files; skills through the same seam),
gathered for a front end under its own built-in names: the one place that decides which
folders are read (a project's only once it is trusted) and which sources take part.

Skills are commands too (:mod:`~tui_agent.custom.skill_commands`), after the files: a
command file keeps a name a skill also has, and the skill's loss is reported like any
clash (the model can still load the skill).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path

from tui_agent.config import Settings
from tui_agent.custom.commands import Expansion, expand
from tui_agent.custom.commands import load as load_files
from tui_agent.custom.registry import CommandSource, Registry, gather


def registry(settings: Settings, built_in: Collection[str],
             env: Mapping[str, str] = os.environ) -> Registry:
    """Every user command a front end whose own commands are ``built_in`` offers: the
    user's, and the project's of ``settings`` when it is trusted (nothing of it is held).
    Reads files: call it off the UI thread."""
    project = settings.project.root if settings.project is not None else None
    return _gathered(project, settings.held is None, built_in, env)


def registry_in(folder: Path, built_in: Collection[str],
                env: Mapping[str, str] = os.environ) -> Registry:
    """As :func:`registry`, for a session in ``folder`` (an editor's, over ACP): the
    project there counts only if the person has trusted it as it is (in the app or with
    ``--trust-project``); an editor has no way to ask."""
    from tui_agent.config.project import find_project
    from tui_agent.config.scopes import trusted

    home = Path(env["HOME"]) if env.get("HOME") else None
    found = find_project(folder, home)
    root = found.root if found is not None else None
    return _gathered(root, root is not None and trusted(root, env), built_in, env)


def _gathered(project: Path | None, trusted: bool, built_in: Collection[str],
              env: Mapping[str, str]) -> Registry:
    from tui_agent.custom.commands import command_folders
    from tui_agent.custom.folders import stamp
    from tui_agent.custom.skill_commands import SkillCommands
    from tui_agent.custom.skills import discover, skill_dirs

    dirs = skill_dirs(env, project if trusted else None)
    watched = (*(f.path for f in command_folders(project, trusted, env)),
               *(base for _, base in dirs))
    seen = stamp(watched)  # before reading: a change while reading is seen next time
    files = load_files(project, trusted, env)
    skills = SkillCommands(discover(dirs))
    sources: list[CommandSource] = [files, skills]  # a command file keeps a skill's name
    found = gather(sources, built_in, files.problems)
    return replace(found, problems=(*found.problems, *skills.problems), watched=watched,
                   seen=seen)


def invoked(text: str) -> tuple[str, str] | None:
    """``(name, arguments)`` when ``text`` is ``/name ...`` with a name that could be a
    user command (not ``//`` for a literal slash, not a path, not ``server:prompt``)."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    head = head.split("\n", 1)[0]
    if not head or "/" in head or ":" in head:
        return None
    return head, stripped[1 + len(head):].strip()


def run(commands: Registry, text: str) -> tuple[str, Expansion] | None:
    """``(name, what it sends)`` when ``text`` runs one of ``commands``; else None."""
    found = invoked(text)
    command = commands.find(found[0]) if found else None
    if command is None or found is None:
        return None
    return command.name, expand(command, found[1])


def unrun_note(name: str, expansion: Expansion) -> str | None:
    """What the person is told of the ``!`command``` lines that were not run."""
    if not expansion.unrun:
        return None
    shown = ", ".join(f"!`{line}`" for line in expansion.unrun)
    return (f"/{name}: {shown} not run (tui-agent runs no shell command of a command "
            "file): sent as written")
