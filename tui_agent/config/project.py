"""The project scope: config files found by walking up from the working directory, and
the record of which projects the user has agreed to trust.

A project can carry ``.tui-agent/config.toml`` (our format) and ``mcp.json`` /
``.mcp.json`` (the ``mcpServers`` or ``servers`` formats other clients write). The
nearest directory holding any of them is the project. The walk stops below the home
directory (home is the user's scope) and at the filesystem root.

A project's servers run commands on this machine, and its ``[model]`` (and
``[models."NAME"]``) endpoint keys and ``params`` decide where the conversation (and the
user's key) goes: those parts are *held* until the user agrees, once per project path and content.
The agreement is keyed on a digest of exactly those parts, so editing a comment or the
theme does not ask again, while a changed command, URL or ``auto`` list does.

Only the standard library is used here: the chat app peeks at a project's theme
before pydantic is imported.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.config import paths
from tui_agent.config.atomic import write_text

PROJECT_FILES = (".tui-agent/config.toml", "mcp.json", ".mcp.json")
"""Looked for in each directory, and loaded in this order (a later file's server of the
same name replaces an earlier one's)."""
HELD_MODEL_KEYS = ("api_base", "api_key", "api_key_env", "params")
"""``[model]`` (and ``[models."NAME"]``) keys a project may set only once trusted: where
requests go, with which key, and the extra arguments sent with them (litellm takes
arguments there that move the request elsewhere, ``extra_headers`` that carry keys...)."""


@dataclass(frozen=True)
class Project:
    """A directory with project config files, nearest first found from the cwd."""

    root: Path
    files: tuple[Path, ...]

    def relative(self, file: Path) -> str:
        try:
            return str(file.relative_to(self.root))
        except ValueError:
            return str(file)


def find_project(start: Path, home: Path | None = None) -> Project | None:
    """The nearest directory from ``start`` upwards holding a project file, or None.

    The home directory and what lies above it are not searched (when ``start`` is below
    home); elsewhere the walk goes up to the root."""
    start = start.resolve()
    home = (home or Path(os.environ.get("HOME") or Path.home())).resolve()
    below_home = start != home and home in start.parents
    for directory in (start, *start.parents):
        if below_home and directory == home:
            return None
        files = tuple(directory / name for name in PROJECT_FILES
                      if (directory / name).is_file())
        if files:
            return Project(directory, files)
    return None


def held_parts(file: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of one parsed project file that need the user's agreement."""
    if file.suffix.lower() == ".json":
        return {k: data[k] for k in ("mcpServers", "servers") if k in data}
    model = data.get("model")
    held: dict[str, Any] = {}
    if isinstance(model, Mapping):
        keys = {k: model[k] for k in HELD_MODEL_KEYS if k in model}
        if keys:
            held["model"] = keys
    tables = data.get("models")
    if isinstance(tables, Mapping):
        keys = {name: {k: table[k] for k in HELD_MODEL_KEYS if k in table}
                for name, table in tables.items() if isinstance(table, Mapping)}
        if any(keys.values()):
            held["models"] = {name: part for name, part in keys.items() if part}
    if "servers" in data:
        held["servers"] = data["servers"]
    return held


def digest(project: Project, parts: Mapping[Path, Mapping[str, Any]]) -> str:
    """A digest of the held parts of every project file (canonical JSON, so formatting
    and comments do not change it)."""
    import hashlib  # here, not on the way to the app's first frame (it reads this module)

    canonical = {project.relative(f): dict(p) for f, p in parts.items() if p}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def trust_store(env: Mapping[str, str] = os.environ) -> TrustStore:
    """The user's record of trusted projects, in the state dir."""
    return TrustStore(paths.state_dir(env) / "trusted-projects.json")


class TrustStore:
    """``trusted-projects.json`` in the state dir: project path -> the digest agreed to.

    A file that cannot be read counts as empty (the user is asked again), and writes are
    atomic."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def trusted(self, root: Path, value: str) -> bool:
        return self._read().get(str(root)) == value

    def record(self, root: Path, value: str) -> None:
        data = self._read()
        data[str(root)] = value
        write_text(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def layer_files(config_file: Path | None = None, mcp_configs: Sequence[Path] = (),
                env: Mapping[str, str] = os.environ, *, cwd: Path | None = None,
                project: bool = True) -> tuple[list[tuple[str, Path]], Project | None]:
    """The files to read, lowest precedence first, each with its scope: the user config
    (``$TUI_AGENT_CONFIG`` or the XDG default, when it exists), the project's files,
    ``--config``, then each ``--mcp-config``; and the project, if one was found."""
    user = paths.default_config_file(env)
    found = find_project(cwd or Path.cwd(), Path(env["HOME"]) if env.get("HOME") else None) \
        if project else None
    files: list[tuple[str, Path]] = []
    if (env.get(paths.CONFIG_ENV) or user.exists()) and not (
            config_file is not None and _same(config_file, user)):
        files.append(("user", user))
    files += [("project", f) for f in (found.files if found else ())]
    if config_file is not None:
        files.append(("--config", config_file))
    files += [("--mcp-config", Path(f)) for f in mcp_configs]
    return files, found


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
