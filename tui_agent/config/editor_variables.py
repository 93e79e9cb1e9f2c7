"""VS Code's variables in another client's server entry, as tui-agent writes them, for
``mcp import``.

VS Code's ``mcp.json`` (its MCP configuration reference) fills in ``${env:NAME}`` (an
environment variable), the predefined ``${workspaceFolder}``, ``${workspaceFolderBasename}``,
``${userHome}``, ``${pathSeparator}`` (``${/}``), and ``${input:ID}``, a value it asks the
person for when the server starts (declared in the file's ``inputs``). Cursor takes the
same spellings. Translated here:

- ``${env:NAME}`` becomes ``${NAME}``, tui-agent's own reference, expanded when the
  config is read;
- ``${workspaceFolder}`` (and its basename) becomes the project folder: the one that
  holds the file for a project's ``.vscode/mcp.json``; for a user file, the folder
  ``mcp import`` runs in (what VS Code would have open), said in a note;
- ``${userHome}`` and ``${pathSeparator}`` become their values on this machine.

``${input:ID}`` cannot be: nothing asks for a value when a server starts here. Such an
entry is not imported, and the reason names the key and the way to write it instead.
So is any other ``${kind:...}`` VS Code has (``${command:...}``, ``${config:...}``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_VARIABLE = re.compile(r"\$\{([A-Za-z]+)(?::([^}]*))?\}")


@dataclass
class Translation:
    """An entry with VS Code's variables written as tui-agent's, the notes to show, and
    why it cannot be imported (None: it can)."""

    entry: Any
    notes: list[str] = field(default_factory=list)
    problem: str | None = None


@dataclass(frozen=True)
class Places:
    """What the predefined variables stand for here."""

    folder: Path
    """The project folder (``${workspaceFolder}``)."""
    home: Path
    folder_guessed: bool
    """``folder`` is the working directory, not the folder of a project's own file."""


def translate(name: str, raw: Any, places: Places) -> Translation:
    """``raw``, one server entry of ``name``, with its variables translated."""
    out = Translation(raw)
    out.entry = _walk(raw, (), name, places, out)
    return out


def _walk(value: Any, path: tuple[str, ...], name: str, places: Places,
          out: Translation) -> Any:
    if isinstance(value, dict):
        return {k: _walk(v, (*path, str(k)), name, places, out) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, (*path, str(i)), name, places, out) for i, v in enumerate(value)]
    if isinstance(value, str) and "${" in value:
        value = value.replace("${/}", os.sep)  # ${pathSeparator}'s short form
        return _VARIABLE.sub(lambda m: _one(m, path, name, places, out), value)
    return value


def _one(match: re.Match[str], path: tuple[str, ...], name: str, places: Places,
         out: Translation) -> str:
    kind, rest = match.group(1), match.group(2)
    key = ".".join(path) or "(entry)"
    if rest is None:
        value = {"workspaceFolder": str(places.folder),
                 "workspaceFolderBasename": places.folder.name,
                 "userHome": str(places.home), "pathSeparator": os.sep}.get(kind)
        if value is None:
            return match.group(0)  # ${NAME}: already tui-agent's own reference
        if kind.startswith("workspaceFolder") and places.folder_guessed:
            note = (f"{name}: {key}: {match.group(0)} written as {value}, the folder "
                    "'mcp import' ran in")
            if note not in out.notes:
                out.notes.append(note)
        return value
    if kind == "env" and rest:
        return "${" + rest + "}"
    if kind == "input":
        why = (f"{key} uses {match.group(0)}, a value VS Code asks for when the server "
               "starts, which tui-agent cannot translate: add the server with 'tui-agent "
               "mcp add', writing the value (or ${VAR}, an environment variable) instead")
    else:
        why = f"{key} uses {match.group(0)}, an editor variable tui-agent cannot fill in"
    if out.problem is None:
        out.problem = why
    return match.group(0)
