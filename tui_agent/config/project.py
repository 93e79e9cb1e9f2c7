"""The project scope: config files found by walking up from the working directory, and
the record of which projects the user has agreed to trust.

A project can carry ``.tui-agent/config.toml`` (our format) and ``mcp.json`` /
``.mcp.json`` (the ``mcpServers`` or ``servers`` formats other clients write). The
nearest directory holding any of them is the project. The walk stops below the home
directory (home is the user's scope) and at the filesystem root.

A project's files come from wherever the user cloned it. Its servers run commands on
this machine; its model name, endpoint, keys and ``params`` decide where the
conversation (and the user's key) goes; its system prompt, roots and code mode change
what is sent and what runs. So the rule is an allow-list: :data:`FREE_KEYS` names the
few keys a project may set at once (limits, sampling knobs, the theme), and every other
key, table and server is *held* until the user agrees, once per project path and
content. The agreement is keyed on a digest of exactly the held parts, so editing a
comment, the theme or a temperature does not ask again, while a changed command, URL,
model or ``auto`` list does.

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
SKILL_DIRS = (".tui-agent/skills", ".agents/skills", ".claude/skills")
"""Where a project keeps Agent Skills (``<dir>/<name>/SKILL.md``): someone else's prompts,
read only once the project is trusted, and listed in the question."""
SKILLS_PART = ".skills"
"""The name the project's skills go by in the trusted digest (not a file)."""
PROJECT_FOLDERS = {".tui-agent/commands": "commands", ".claude/commands": "commands",
                   ".tui-agent/agents": "agents", ".claude/agents": "agents"}
"""Folders of prompts a project brings (someone else's words, sent as the user's own when
the user runs them), by what they hold. A directory holding one is a project too, and
their files are read only once the project is trusted: the names of the ``.md`` files in
them are part of what the user agrees to (a new file asks again; an edit to one does
not). The home directory's own are the user's, never a project's."""
MAX_LISTED = 500
"""Files of one such folder that count (the command reader reads no more either)."""
FREE_KEYS: dict[str, dict[str, str]] = {
    "model": {
        "temperature": "how the user's own model samples; nothing else is sent",
        "max_tokens": "how long a reply of the user's own model may be",
        "timeout": "how long one request to the user's model may take",
        "max_retries": "how often a failed request to the same endpoint is retried",
        "retry_backoff": "how long to wait between those retries",
        "context_window": "when the conversation is summarized, by the same model",
        "reasoning_effort": "how hard the user's own model thinks",
        "prompt_cache": "cache marks inside the same request to the same endpoint",
    },
    "agent": {
        "max_depth": "how many round trips a turn may take; every tool call still asks",
        "tool_timeout": "how long a tool call may take",
        "max_tool_output": "how much of a result the same model reads",
        "compact_at": "when the conversation is summarized, by the same model",
    },
    "code_mode": {
        "binding_level": "how the stubs are laid out, if the user turned code mode on",
        "timeout": "a script's limit (code mode itself is the user's to turn on)",
        "max_output": "a script's limit",
        "max_calls": "a script's limit; each call still passes the approval gate",
        "max_depth": "a script's limit",
        "max_memory_mb": "a script's limit",
        "max_cpu": "a script's limit",
        "max_transfer_mb": "a script's limit",
        "max_scripts": "a script's limit",
        "max_total_memory_mb": "a script's limit",
    },
    "ui": {
        "theme": "colours only (the app peeks at it before the first frame)",
    },
}
"""The keys a project may set without the user's agreement, by section, each with why it
is harmless: none changes where a request goes, what it carries beyond sampling knobs
and limits, which key is sent, which tools or directories are offered, or what runs.
Everything else in a project file is held: ``[model]`` ``name``, ``api_base``,
``api_key``, ``api_key_env``, ``params`` (the provider prefix of a name can carry a URL;
litellm takes arguments that move a request), ``sampling_model``, ``system_prompt``,
``choices``, ``vision`` and ``audio`` (what tools' media send); ``[agent] roots``;
``[code_mode] enabled``; ``[servers.*]`` whole; and any key not listed here, present or
future. ``[models."NAME"]`` tables follow the ``[model]`` list key by key."""


@dataclass(frozen=True)
class Project:
    """A directory with project config files, nearest first found from the cwd."""

    root: Path
    files: tuple[Path, ...]
    content: tuple[Path, ...] = ()
    """The :data:`PROJECT_FOLDERS` it holds."""

    def relative(self, file: Path) -> str:
        try:
            return str(file.relative_to(self.root))
        except ValueError:
            return str(file)


def find_project(start: Path, home: Path | None = None) -> Project | None:
    """The nearest directory from ``start`` upwards holding a project file, or None;
    with no project file up the tree, the nearest holding a :data:`PROJECT_FOLDERS`
    folder (a project file further up wins over a nearer folder of prompts: a monorepo's
    ``.mcp.json`` stays the project's when a package in it has ``.claude/commands/``).

    The home directory and what lies above it are not searched (when ``start`` is below
    home); elsewhere the walk goes up to the root."""
    start = start.resolve()
    home = (home or Path(os.environ.get("HOME") or Path.home())).resolve()
    below_home = start != home and home in start.parents
    nearest: Path | None = None
    for directory in (start, *start.parents):
        if below_home and directory == home:
            break
        files = tuple(directory / name for name in PROJECT_FILES
                      if (directory / name).is_file())
        if files:
            return Project(directory, files, _folders(directory, home))
        if nearest is None and (_folders(directory, home) or (
                directory != home and project_skills(directory))):
            nearest = directory
    return Project(nearest, (), _folders(nearest, home)) if nearest is not None else None


def _folders(directory: Path, home: Path) -> tuple[Path, ...]:
    """The :data:`PROJECT_FOLDERS` in ``directory`` (none in the home directory: those
    are the user's own)."""
    if directory == home:
        return ()
    return tuple(directory / name for name in PROJECT_FOLDERS if (directory / name).is_dir())


def content_parts(project: Project) -> dict[Path, dict[str, Any]]:
    """What each of the project's :data:`PROJECT_FOLDERS` holds, as the user agrees to
    it: the ``.md`` files' paths inside it (an unreadable folder: none)."""
    parts: dict[Path, dict[str, Any]] = {}
    for folder in project.content:
        try:
            names = sorted(str(f.relative_to(folder)) for f in folder.rglob("*.md"))
        except OSError:
            names = []
        if names:
            parts[folder] = {"files": names[:MAX_LISTED]}
            if PROJECT_FOLDERS.get(_relative(folder, project.root)) == "agents":
                # An agent file names the model its requests go to (a provider prefix can
                # carry a URL) and the tools it gets: an edit asks again, as a changed
                # [model] does, where a command file's edit does not.
                parts[folder]["digests"] = [_file_digest(folder / n)
                                            for n in names[:MAX_LISTED]]
    return parts


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.relative_to(root).as_posix()
    except ValueError:
        return ""


def _file_digest(file: Path) -> str:
    import hashlib

    try:
        return hashlib.sha256(file.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def project_skills(root: Path) -> list[str]:
    """The ``SKILL.md`` files of the project's skill folders, relative to ``root``, sorted
    (what the trust question lists; a new skill asks again, an edited one does not)."""
    found = []
    for folder in SKILL_DIRS:
        try:
            entries = sorted((root / folder).iterdir())
        except OSError:
            continue
        found += [f"{folder}/{e.name}/SKILL.md" for e in entries
                  if not e.name.startswith(".") and (e / "SKILL.md").is_file()]
    return found


def free(section: str, key: str) -> bool:
    """Whether a project may set ``section.key`` without the user's agreement
    (``models`` tables follow ``model``'s list)."""
    return key in FREE_KEYS.get("model" if section == "models" else section, {})


def held_parts(file: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of one parsed project file that need the user's agreement: every key
    :func:`free` does not allow, by section (``models`` by table)."""
    if file.suffix.lower() == ".json":
        return {k: data[k] for k in ("mcpServers", "servers") if k in data}
    held: dict[str, Any] = {}
    for section, value in data.items():
        if section == "models" and isinstance(value, Mapping):
            tables = {name: _held_keys("models", table) for name, table in value.items()}
            if any(tables.values()):
                held[section] = {name: part for name, part in tables.items() if part}
        elif section in FREE_KEYS and isinstance(value, Mapping):
            if keys := _held_keys(section, value):
                held[section] = keys
        else:
            held[section] = value
    return held


def _held_keys(section: str, table: Any) -> Any:
    if not isinstance(table, Mapping):
        return table
    return {k: v for k, v in table.items() if not free(section, k)}


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


CONTENT_TRUSTED = "trusted"
"""What :func:`content_trust_store` records for a folder whose content the user trusts."""


def content_trust_store(env: Mapping[str, str] = os.environ) -> TrustStore:
    """The user's record of projects whose files may be read as prompts (AGENTS.md...):
    trust for the folder, so editing the files does not ask again."""
    return TrustStore(paths.state_dir(env) / "trusted-content.json")


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
    (``$TUI_AGENT_CONFIG`` or the XDG default, when it exists; ``--config-only`` when
    that flag named it), the project's files,
    ``--config``, then each ``--mcp-config``; and the project, if one was found."""
    user = paths.default_config_file(env)
    found = find_project(cwd or Path.cwd(), Path(env["HOME"]) if env.get("HOME") else None) \
        if project else None
    files: list[tuple[str, Path]] = []
    if (env.get(paths.CONFIG_ENV) or user.exists()) and not (
            config_file is not None and _same(config_file, user)):
        given = env.get(paths.ONLY_ENV)
        files.append(("--config-only" if given and given == env.get(paths.CONFIG_ENV)
                      else "user", user))
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
