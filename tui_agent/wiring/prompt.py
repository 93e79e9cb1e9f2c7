"""The system prompt of a run, from the settings: tui-agent's own part (or ``[model]
system_prompt``), ``append_system_prompt``, the environment of the working directory, and
project memory read from where :func:`memory_where` says, project files only once the
project is trusted (:func:`hold_memory` puts them before the user first).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tui_agent.config import Settings, paths
from tui_agent.config.held import HeldProject
from tui_agent.config.trust import content_trusted, hold_content
from tui_agent.core.prompt import Environment, SystemPrompt
from tui_agent.custom.memory import MemoryReader, Where, project_files, project_root


def memory_where(settings: Settings, cwd: Path | None = None,
                 env: Mapping[str, str] = os.environ) -> Where:
    """Where a run in ``cwd`` reads memory, and whether its project files are trusted
    (``--no-project``: no project root, the user's own memory alone)."""
    cwd = (cwd or Path.cwd()).resolve()
    home = Path(env.get("HOME") or Path.home())
    config_root = settings.project.root if settings.project is not None else None
    root = project_root(cwd, home, config_root) if settings.project_content else None
    memory = settings.config.memory
    return Where(paths.default_config_file(env).parent, root, cwd, home.resolve(),
                 tuple(memory.files), trusted=root is not None and content_trusted(root, env),
                 enabled=memory.enabled)


def hold_memory(settings: Settings, cwd: Path | None = None, *, trust: bool = False,
                env: Mapping[str, str] = os.environ) -> None:
    """After loading: the project's memory files join what waits for the user's trust
    (``trust``: ``--trust-project``, trusted now). Reads nothing but file names."""
    where = memory_where(settings, cwd, env)
    if where.root is not None:
        hold_content(settings, where.root, [("memory", p) for p in project_files(where)],
                     env, trust=trust)


def held_in(folder: Path, env: Mapping[str, str] = os.environ) -> HeldProject | None:
    """What the project of ``folder`` holds back until the person trusts it (its config's
    servers and settings, its skills and prompt folders, its memory files), as a run
    started there finds it; None when nothing waits. Reads the config files (raises
    :class:`~tui_agent.config.ConfigError`), not the content."""
    from tui_agent.config import load

    settings = load(env=env, cwd=folder)
    hold_memory(settings, folder, env=env)
    return settings.held


def system_prompt(settings: Settings, cwd: Path | None = None) -> SystemPrompt:
    """The parts of a conversation's system prompt (memory is read at its first turn)."""
    model = settings.config.model
    where = memory_where(settings, cwd)
    root = where.root
    return SystemPrompt(replacement=model.system_prompt, append=model.append_system_prompt,
                        environment=Environment.here(where.cwd),
                        memory=MemoryReader(where, trusted=lambda: root is not None
                                            and content_trusted(root)))
