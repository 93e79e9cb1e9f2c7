"""Which file ``mcp add`` (and ``mcp import``) writes, and what that does to a project's
trust.

``--scope user`` is the user config file (:func:`~tui_agent.config.paths.
default_config_file`); ``--scope project`` the project's ``.tui-agent/config.toml``, in
the nearest project directory (:func:`~tui_agent.config.project.find_project`) or else
the working directory. Without ``--scope``: the ``--config`` file when one is named,
else the user file.

A project's servers run only once the person has agreed to the project's exact content
(:mod:`tui_agent.config.project`). A server the person adds there themselves is their
own agreement: a project that was trusted (or held nothing) before the edit stays
trusted after it. One that was waiting for agreement keeps waiting: adding a server
does not approve the others'.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tui_agent.config import paths
from tui_agent.config.project import Project, find_project, trust_store


@dataclass(frozen=True)
class Target:
    """The file to write, its scope (``user``, ``project`` or ``--config``), and the
    project when it is the project's."""

    kind: str
    file: Path
    project_root: Path | None = None


def target(scope: str | None, config_file: Path | None,
           env: Mapping[str, str] = os.environ, cwd: Path | None = None) -> Target:
    if scope == "project":
        here = (cwd or Path.cwd()).resolve()
        found = find_project(here, Path(env["HOME"]) if env.get("HOME") else None)
        root = found.root if found is not None else here
        return Target("project", root / ".tui-agent" / "config.toml", root)
    if scope == "user" or config_file is None:
        return Target("user", paths.default_config_file(env))
    return Target("--config", config_file)


def _project(root: Path) -> Project | None:
    found = find_project(root, root.parent)
    return found if found is not None and found.root == root else None


def trusted(root: Path, env: Mapping[str, str] = os.environ) -> bool:
    """Whether the project in ``root`` runs its servers now: it asks for nothing that
    needs agreement, or the person agreed to exactly what it holds."""
    from tui_agent.config.held import project_digest, project_held

    found = _project(root)
    if found is None or not project_held(found):
        return True
    return trust_store(env).trusted(root, project_digest(found))


def keep_trusted(root: Path, env: Mapping[str, str] = os.environ) -> None:
    """Record the project's new content as agreed to (after the person's own edit)."""
    from tui_agent.config.held import project_digest

    found = _project(root)
    if found is not None:
        trust_store(env).record(root, project_digest(found))
