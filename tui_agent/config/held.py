"""What a project asks for that waits for the user's agreement: its servers and the
settings not on the allow-list, its skills and the prompts its folders bring. One digest
covers them all (:func:`~tui_agent.config.project.digest`); the trust store remembers the
digest the user agreed to, and a change asks again."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.config.models import ServerConfig
from tui_agent.config.project import (
    SKILLS_PART,
    Project,
    content_parts,
    digest,
    held_parts,
    project_skills,
    trust_store,
)
from tui_agent.config.reading import Origin, read_config_text


@dataclass
class HeldProject:
    """What a project's files ask for that needs the user's agreement first: servers
    (unexpanded, as written), and every setting not on the allow-list
    (:data:`~tui_agent.config.project.FREE_KEYS`). Not applied until trusted."""

    project: Project
    digest: str
    servers: dict[str, tuple[ServerConfig, Origin]] = field(default_factory=dict)
    keys: dict[str, tuple[Any, Origin]] = field(default_factory=dict)
    """Held settings by dotted name: ``model.name``, ``agent.roots``,
    ``models."NAME".api_base``..."""
    skills: tuple[str, ...] = ()
    """The project's Agent Skills (``SKILL.md`` paths from its root): not offered until
    trusted."""
    content: list[tuple[str, Path]] = field(default_factory=list)
    """Project files read as prompts once the project is trusted (``memory``, and any other
    kind :func:`hold_content` is given), with their kind; not read until then."""
    content_root: Path | None = None
    """The folder that trust is recorded for (``content``'s project root)."""

    def asks_config(self) -> bool:
        """Whether the config files ask for anything (not only project content)."""
        return bool(self.servers or self.keys)

    folders: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Prompts the project brings (:data:`~tui_agent.config.project.PROJECT_FOLDERS`),
    by folder relative to the root (``.claude/commands``): the files in it."""


def held_back(found: Project | None, raws: Mapping[Path, dict[str, Any]],
              env: Mapping[str, str], trust: bool) -> HeldProject | None:
    """An empty :class:`HeldProject` when the project (its config files read as ``raws``)
    asks for something that needs the user's agreement and has not had it; None when there
    is nothing to hold back. ``trust``: the user agrees now (recorded)."""
    if found is None:
        return None
    parts: dict[Path, Any] = {file: held_parts(file, raw) for file, raw in raws.items()}
    skills = project_skills(found.root)
    if skills:
        parts[found.root / SKILLS_PART] = {"skills": skills}
    parts.update(content_parts(found))
    if not any(parts.values()):
        return None
    value = digest(found, parts)
    store = trust_store(env)
    if trust:
        store.record(found.root, value)
        return None
    return None if store.trusted(found.root, value) \
        else HeldProject(found, value, skills=tuple(skills))


def project_digest(found: Project) -> str:
    """The digest of a project's files as they are now on disk (after the app itself
    wrote an "always allow" into one of them)."""
    return digest(found, held_on_disk(found))


def project_held(found: Project) -> bool:
    """Whether the project's files, as they are on disk, ask for anything that needs
    the person's agreement (servers, a setting not on the allow-list)."""
    return any(held_on_disk(found).values())


def held_on_disk(found: Project) -> dict[Path, dict[str, Any]]:
    parts: dict[Path, dict[str, Any]] = {}
    for file in found.files:
        if (held := held_in_text(file, read_config_text(file))) is not None:
            parts[file] = held
    if skills := project_skills(found.root):
        parts[found.root / SKILLS_PART] = {"skills": skills}
    parts.update(content_parts(found))
    return parts


def held_in_text(file: Path, text: str) -> dict[str, Any] | None:
    """What ``text``, the content of the project file ``file``, asks for (None: it does
    not parse, and so counts for nothing)."""
    try:
        raw = json.loads(text) if file.suffix.lower() == ".json" else tomllib.loads(text)
    except ValueError:
        return None
    return held_parts(file, raw) if isinstance(raw, dict) else {}
