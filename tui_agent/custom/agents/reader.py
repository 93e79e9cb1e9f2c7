"""Finding and reading agent files.

Folders, in the order that wins a name clash (:func:`agent_folders`): a trusted project's
``.tui-agent/agents/`` then ``.claude/agents/``, then the user's ``agents/`` beside the
config file, then ``~/.claude/agents/``: a project's agent replaces the user's of the same
name, as in Claude Code (the project's files are read only once the person trusts the
project, and its folders are named in that question). Every ``*.md`` file below a folder
is one agent; its frontmatter is read as command files' is
(:func:`~tui_agent.custom.commands.parse_frontmatter`).

Keys: ``name`` (default: the file's stem; a command's name rules), ``description``
(required), ``model`` (absent or ``inherit``: the parent's model; kept as written: which
settings an alias such as ``sonnet`` gets is the wiring's business), ``tools`` and
``disallowedTools`` (:mod:`.tool_names`), ``reasoning_effort`` (or Claude Code's
``effort``), ``max_turns`` (or ``maxTurns``), ``disabled`` (true: not offered). Other keys
(Claude Code's ``color``, ``permissionMode``, ``skills``, ``hooks``, ``memory``,
``mcpServers``, ...) are ignored. A bad file is an :class:`AgentProblem` with its file and
line; the others load. A file that loads but lost part of itself (a Claude Code tool with
no equivalent) loads, with a problem that says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.config.reasoning import REASONING_EFFORTS
from tui_agent.custom.agents import AgentDef, AgentProblem
from tui_agent.custom.agents.tool_names import ToolNames, read_tool_names
from tui_agent.custom.commands import NAME, parse_frontmatter, split_frontmatter
from tui_agent.custom.folders import markdown_files

MAX_FILES = 200
"""Agent files read per folder (a folder of thousands is cut, and said)."""
MAX_BYTES = 256 * 1024
"""An agent file larger than this is refused (a system prompt is not a data file)."""
INHERIT = "inherit"
EFFORT_ABOVE = {"xhigh": "high", "max": "high"}
"""Claude Code's ``effort`` levels litellm has no name for, and the nearest it has."""


@dataclass(frozen=True)
class AgentFolder:
    scope: str
    """``project`` or ``user``: the agent's ``origin``."""
    path: Path


@dataclass(frozen=True)
class FileAgents:
    """The agents found (a name once: the first folder's wins), and the problems."""

    found: tuple[AgentDef, ...] = ()
    problems: tuple[AgentProblem, ...] = ()


def agent_folders(config_dir: Path, home: Path, project: Path | None) -> list[AgentFolder]:
    """Where agent files are looked for, in the order that wins a clash (``project``: a
    trusted project's root, else None)."""
    found = []
    if project is not None:
        found += [AgentFolder("project", project / ".tui-agent" / "agents"),
                  AgentFolder("project", project / ".claude" / "agents")]
    return found + [AgentFolder("user", config_dir / "agents"),
                    AgentFolder("user", home / ".claude" / "agents")]


def load(project: Path | None, env: Mapping[str, str]) -> FileAgents:
    """The agent files of the user of ``env`` and of the trusted ``project`` (None: no
    project, or one not trusted)."""
    from tui_agent.config import paths

    home = Path(env.get("HOME") or Path.home())
    return discover(agent_folders(paths.default_config_file(env).parent, home, project))


def discover(where: Sequence[AgentFolder], reserved: Sequence[str] = ()) -> FileAgents:
    """Every agent file in ``where`` (a missing folder is no problem), read; a name taken
    by an earlier folder's file is a problem naming the winner."""
    found: dict[str, AgentDef] = {}
    problems: list[AgentProblem] = []
    for folder in where:
        for file in _files(folder, problems):
            outcome = read_agent(file, folder.scope)
            if isinstance(outcome, AgentProblem):
                problems.append(outcome)
                continue
            agent, notes = outcome
            problems += [AgentProblem(file, agent.line, note) for note in notes]
            if agent.name is None or agent.name == "":
                continue
            winner = found.get(agent.name.lower())
            if winner is not None:
                problems.append(AgentProblem(file, 1, f"the agent '{agent.name}' is not "
                                             f"used: {winner.file} ({winner.origin}) has that "
                                             "name and wins"))
            else:
                found[agent.name.lower()] = agent
    return FileAgents(tuple(found.values()), tuple(problems))


def _files(folder: AgentFolder, problems: list[AgentProblem]) -> Iterator[Path]:
    """The ``*.md`` files below ``folder`` (:func:`~tui_agent.custom.folders.markdown_files`)."""
    return markdown_files(folder.path, project=folder.scope == "project", limit=MAX_FILES,
                          what="agent files",
                          problem=lambda path, line, message: problems.append(
                              AgentProblem(path, line, message)))


def read_agent(file: Path, origin: str) -> tuple[AgentDef, list[str]] | AgentProblem:
    """One agent file as an agent and the notes about it, or what is wrong with it. A
    file with ``disabled: true`` gives an agent with an empty name (not offered)."""
    try:
        size = file.stat().st_size
        if size > MAX_BYTES:
            return AgentProblem(file, 0, f"{size:,} bytes: an agent file may have at most "
                                f"{MAX_BYTES:,}")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return AgentProblem(file, 0, f"cannot be read: {exc}")
    head, body, body_line = split_frontmatter(text)
    if head is None:
        return AgentProblem(file, 1, "no frontmatter: an agent file starts with a '---' "
                            "block giving at least its description")
    meta = parse_frontmatter(head)
    if isinstance(meta, tuple):
        return AgentProblem(file, meta[0] + 1, f"bad frontmatter: {meta[1]}")
    fields = _fields(meta, file, head)
    if not isinstance(fields, Fields):
        return AgentProblem(file, *fields)
    if fields.disabled:
        return AgentDef("", fields.description, "", origin, file=file), []
    return AgentDef(fields.name, fields.description, body.strip("\n"), origin,
                    model=fields.model, tools=fields.tools.globs,
                    reasoning_effort=fields.effort, max_turns=fields.max_turns, file=file,
                    line=1, disallowed=fields.disallowed.globs or ()), fields.notes


@dataclass(frozen=True)
class Fields:
    name: str
    description: str
    model: str | None
    tools: ToolNames
    disallowed: ToolNames
    effort: str | None
    max_turns: int | None
    disabled: bool
    notes: list[str]


def _fields(meta: dict[str, Any], file: Path, head: str) -> Fields | tuple[int, str]:
    """The frontmatter's keys, or ``(line, what is wrong)``: the file's line of the key
    (line 1, the opening ``---``, for a key that is missing)."""
    def at(key: str) -> int:
        lines = head.splitlines()
        return next((i + 2 for i, ln in enumerate(lines) if ln.startswith(f"{key}:")), 1)

    def text(key: str) -> str:
        value = meta.get(key)
        if value is None:
            return ""
        if isinstance(value, (dict, list)):
            raise _Bad(key, f"'{key}' must be text, not a {type(value).__name__}")
        return str(value).strip()

    try:
        name = text("name") or file.stem
        if not NAME.fullmatch(name):
            raise _Bad("name", f"'{name}' cannot be an agent's name (letters, digits, '-', "
                       "'_' and '.', starting with a letter or digit)")
        description = text("description")
        if not description:
            raise _Bad("description", "no 'description': the model picks an agent by it, "
                       "so every agent file needs one")
        model = text("model")
        effort_key = "reasoning_effort" if "reasoning_effort" in meta else "effort"
        effort = text(effort_key).lower() or None
        notes: list[str] = []
        if effort in EFFORT_ABOVE:
            notes.append(f"'{effort_key}: {effort}' is sent as '{EFFORT_ABOVE[effort]}' "
                         "(litellm's highest)")
            effort = EFFORT_ABOVE[effort]
        if effort is not None and effort not in REASONING_EFFORTS:
            raise _Bad(effort_key, f"'{effort_key}' must be one of "
                       f"{', '.join(REASONING_EFFORTS)}, not '{effort}'")
        turns_key = "max_turns" if "max_turns" in meta else "maxTurns"
        turns = meta.get(turns_key)
        if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int)
                                  or not 1 <= turns <= MAX_TURNS):
            raise _Bad(turns_key, f"'{turns_key}' must be a whole number from 1 to "
                       f"{MAX_TURNS}, not {turns!r}")
        tools = read_tool_names(meta.get("tools"), "tools")
        if isinstance(tools, str):
            raise _Bad("tools", tools)
        disallowed = read_tool_names(meta.get("disallowedTools"), "disallowedTools")
        if isinstance(disallowed, str):
            raise _Bad("disallowedTools", disallowed)
    except _Bad as bad:
        return at(bad.key), f"bad frontmatter: {bad.message}"
    return Fields(name, description, None if model.lower() in ("", INHERIT) else model,
                  tools, disallowed, effort, turns, meta.get("disabled") is True,
                  [*notes, *tools.notes, *disallowed.notes])


MAX_TURNS = 1000
"""The most model round trips an agent file may give its agent (as ``[agents] max_turns``
allows): a looping agent stays bounded."""


class _Bad(Exception):
    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key, self.message = key, message
