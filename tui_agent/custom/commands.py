"""Commands from files: markdown files that become ``/name`` commands, read the way
Claude Code reads its custom slash commands, so a user's existing files work unchanged.

Where: the user's ``commands/`` folder beside the config file and ``~/.claude/commands/``;
in a trusted project, ``.tui-agent/commands/`` and ``.claude/commands/`` at the project's
root (:func:`folders`). Each ``*.md`` file below a folder is one command named after the
file (``review.md`` is ``/review``); a subfolder only describes it (``frontend/
component.md`` is ``/component``, shown as ``(project:frontend)``), as Claude Code does.
An optional YAML frontmatter gives ``description``, ``argument-hint``, ``model`` and
``allowed-tools`` (other keys are ignored); without a description the body's first line
is shown. Running one (:func:`expand`) puts the arguments in for ``$ARGUMENTS``,
``$ARGUMENTS[0]`` (counted from 0) and ``$1``, ``$2``... (counted from 1); a body with
none of them gets ``ARGUMENTS: ...`` appended, as Claude Code does.

What Claude Code runs and we do not: a ``!`command``` is not run (tui-agent has no shell
of its own; it is sent as written and listed in :attr:`Expansion.unrun` for the front end
to say so), and ``allowed-tools`` is shown, never honoured (every call still passes the
gate). ``@path`` is left in the text: the front ends read it as they read a typed
``@path`` (inside the project, size-capped).

The order that decides a clash is :mod:`tui_agent.custom.registry`'s; here each bad file
becomes a :class:`CommandProblem` naming the file and line, and the others still load.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.custom.folders import markdown_files

MAX_FILES = 500
"""Command files read per folder (a folder of thousands is cut, and said)."""
MAX_BYTES = 256 * 1024
"""A command file larger than this is refused (a prompt is not a data file)."""
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A command's name: what can follow ``/`` and be told from a path or an MCP prompt
(``server:prompt``), within the OpenAI function-name alphabet plus ``.``."""
PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)")
SHELL = re.compile(r"!`([^`\n]+)`")


@dataclass(frozen=True)
class UserCommand:
    """One command a user (or a provider such as skills) offers as ``/name``.

    ``origin`` is where it comes from (``user``, ``project``, or a provider's word such
    as ``skill``); ``label`` is what ``/help`` shows beside it (``project:frontend``).
    ``body`` is the prompt, whose first line is line ``body_line`` of ``file``."""

    name: str
    description: str
    body: str
    origin: str
    label: str
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    file: Path | None = None
    body_line: int = 1


@dataclass(frozen=True)
class CommandProblem:
    """A command file that could not be used, or a name that lost a clash."""

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Expansion:
    """A command run with its arguments: the message to send, the model for this turn
    only (None: the one in use), and the ``!`command``` lines that were not run."""

    text: str
    model: str | None = None
    unrun: tuple[str, ...] = ()


@dataclass(frozen=True)
class Folder:
    scope: str
    """``user`` or ``project``."""
    path: Path


def folders(config_dir: Path, home: Path, project: Path | None) -> list[Folder]:
    """Where commands are looked for, in the order that wins a clash: the user's own,
    the user's Claude Code ones, then (``project``: the root of a trusted project, else
    None) the project's own and its Claude Code ones."""
    found = [Folder("user", config_dir / "commands"), Folder("user", home / ".claude" / "commands")]
    if project is not None:
        found += [Folder("project", project / ".tui-agent" / "commands"),
                  Folder("project", project / ".claude" / "commands")]
    return found


@dataclass(frozen=True)
class FileCommands:
    """The command files found, with the problems of the ones that could not be used; a
    :class:`~tui_agent.custom.registry.CommandSource`."""

    found: tuple[UserCommand, ...] = ()
    problems: tuple[CommandProblem, ...] = ()

    def commands(self) -> Sequence[UserCommand]:
        return self.found


def discover(where: Sequence[Folder]) -> FileCommands:
    """Every command file in ``where`` (a missing folder is no problem), read."""
    found: list[UserCommand] = []
    problems: list[CommandProblem] = []
    for folder in where:
        for file in _files(folder, problems):
            outcome = read_command(file, folder)
            if isinstance(outcome, UserCommand):
                found.append(outcome)
            else:
                problems.append(outcome)
    return FileCommands(tuple(found), tuple(problems))


def _files(folder: Folder, problems: list[CommandProblem]) -> Iterator[Path]:
    """The ``*.md`` files below ``folder`` (:func:`~tui_agent.custom.folders.markdown_files`)."""
    return markdown_files(folder.path, project=folder.scope == "project", limit=MAX_FILES,
                          what="command files",
                          problem=lambda path, line, message: problems.append(
                              CommandProblem(path, line, message)))


def read_command(file: Path, folder: Folder) -> UserCommand | CommandProblem:
    """One command file as a command, or what is wrong with it (file and line)."""
    name = file.stem
    if not NAME.fullmatch(name):
        return CommandProblem(file, 0, f"'{name}' cannot be a command name (letters, digits, "
                              "'-', '_' and '.', starting with a letter or digit)")
    try:
        size = file.stat().st_size
        if size > MAX_BYTES:
            return CommandProblem(file, 0, f"{size:,} bytes: a command file may have at "
                                  f"most {MAX_BYTES:,}")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return CommandProblem(file, 0, f"cannot be read: {exc}")
    head, body, body_line = split_frontmatter(text)
    meta: dict[str, Any] = {}
    if head is not None:
        parsed = parse_frontmatter(head)
        if isinstance(parsed, tuple):
            return CommandProblem(file, parsed[0] + 1, f"bad frontmatter: {parsed[1]}")
        meta = parsed
    fields = _fields(meta)
    if isinstance(fields, str):
        return CommandProblem(file, 2, f"bad frontmatter: {fields}")
    description, hint, model, tools = fields
    space = file.parent.relative_to(folder.path).parts
    return UserCommand(
        name=name, description=description or _first_line(body), body=body,
        origin=folder.scope, label=":".join((folder.scope, *space)), argument_hint=hint,
        model=model, allowed_tools=tools, file=file, body_line=body_line)


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """``(frontmatter, body, the body's first line number)``; no frontmatter: None and
    the whole text. A frontmatter is a first line ``---`` up to the next ``---`` line."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return None, text, 1
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1:]), i + 2
    return None, text, 1  # no closing line: it is all body, as Claude Code reads it


def parse_frontmatter(head: str) -> dict[str, Any] | tuple[int, str]:
    """The frontmatter's keys, or ``(line within it, counted from 1, what is wrong)``.

    YAML, except that ``argument-hint`` is taken as written: Claude Code's own examples
    write ``argument-hint: [pr-number] [priority]``, which YAML reads as a broken list."""
    import yaml

    hint = re.compile(r"^argument-hint:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
    written = hint.search(head)
    quoted = hint.sub(lambda m: "argument-hint: " + json.dumps(m.group(1)), head)
    try:
        data = yaml.safe_load(quoted) if quoted.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return (mark.line + 1 if mark is not None else 1), str(why)
    if not isinstance(data, dict):
        return 1, "it is not a list of 'key: value' lines"
    if written is not None:
        text = written.group(1)
        data["argument-hint"] = text[1:-1] if len(text) > 1 and text[0] == text[-1] \
            and text[0] in "'\"" else text
    return {str(k): v for k, v in data.items()}


def _fields(meta: dict[str, Any]) -> tuple[str, str, str | None, tuple[str, ...]] | str:
    def text(key: str) -> str:
        value = meta.get(key)
        if value is None:
            return ""
        if isinstance(value, (dict, list)):
            raise ValueError(f"'{key}' must be text, not a {type(value).__name__}")
        return str(value).strip()

    try:
        description, hint, model = text("description"), text("argument-hint"), text("model")
    except ValueError as exc:
        return str(exc)
    tools = meta.get("allowed-tools") or []
    words = tools.split(",") if isinstance(tools, str) else [str(t) for t in tools] \
        if isinstance(tools, list) else None
    if words is None:
        return "'allowed-tools' must be a list or text"
    return description, hint, model or None, tuple(w.strip() for w in words if w.strip())


def _first_line(body: str) -> str:
    line = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    return line.lstrip("#").strip()[:100]


def split_arguments(arguments: str) -> list[str]:
    """The positional arguments: words, with quotes keeping words together (unbalanced
    quotes: plain words)."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def expand(command: UserCommand, arguments: str) -> Expansion:
    """The message ``/name arguments`` sends: the body with its placeholders filled (a
    missing positional one is empty)."""
    arguments = arguments.strip()
    words = split_arguments(arguments)

    def fill(match: re.Match[str]) -> str:
        zero_based, one_based = match.group(1), match.group(2)
        if zero_based is not None:
            index = int(zero_based)
        elif one_based is not None:
            index = int(one_based) - 1
        else:
            return arguments
        return words[index] if 0 <= index < len(words) else ""

    body = command.body.strip("\n")
    text, count = PLACEHOLDER.subn(fill, body)
    if not count and arguments:
        text = f"{text}\n\nARGUMENTS: {arguments}"
    unrun = tuple(m.group(1).strip() for m in SHELL.finditer(body))
    return Expansion(text, command.model, unrun)


def load(project: Path | None, trusted: bool, env: Mapping[str, str]) -> FileCommands:
    """The command files of the user and, when ``trusted``, of the ``project`` at that
    root (its commands folders are part of what the user agreed to)."""
    return discover(command_folders(project, trusted, env))


def command_folders(project: Path | None, trusted: bool, env: Mapping[str, str]
                    ) -> list[Folder]:
    """:func:`folders` for the user of ``env`` (the project's only when ``trusted``)."""
    from tui_agent.config import paths

    home = Path(env.get("HOME") or Path.home())
    return folders(paths.default_config_file(env).parent, home, project if trusted else None)
