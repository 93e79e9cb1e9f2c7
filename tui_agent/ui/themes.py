"""Themes as files: the ones shipped in ``themes/`` (inside the package as
``tui_agent.themes``) and the user's own in ``$XDG_CONFIG_HOME/tui-agent/themes/``.

A theme file is TOML with ``name``, ``dark`` and the colours Textual's ``Theme``
takes (``primary`` is required), plus an optional ``[variables]`` table. A bad
file is reported (file and what was wrong) and skipped; it never stops the app.
"""

from __future__ import annotations

import importlib.util
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "tui-agent-night"
COLOURS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
           "background", "surface", "panel", "boost")


def bundled_files() -> list[tuple[str, str]]:
    """(name, text) of every theme shipped with tui-agent."""
    spec = importlib.util.find_spec("tui_agent.themes")
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    if folders and all(folder.is_dir() for folder in folders):  # files: every pip install
        return sorted((path.name, path.read_text(encoding="utf-8"))
                      for folder in folders for path in folder.glob("*.toml"))
    # Inside a zip: importlib.resources reads it (with zipfile: kept off the usual path,
    # ~3 ms on the way to the first frame).
    from importlib import resources

    return sorted((entry.name, entry.read_text(encoding="utf-8"))
                  for entry in resources.files("tui_agent.themes").iterdir()
                  if entry.name.endswith(".toml"))


def user_files(directory: Path) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if directory.is_dir():
        for path in sorted(directory.glob("*.toml")):
            try:
                found.append((str(path), path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as exc:
                found.append((str(path), f"\0{exc}"))
    return found


def parse(source: str, text: str) -> Theme:
    """One theme file as a Textual theme; ``ValueError`` names the file and the problem."""
    if text.startswith("\0"):
        raise ValueError(f"{source}: cannot read it: {text[1:]}")
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML: {exc}") from None
    known = {"name", "dark", "variables", *COLOURS}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{source}: unknown key(s) {', '.join(unknown)} "
                         f"(a theme has: {', '.join(sorted(known))})")
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        raise ValueError(f"{source}: 'name' must be a non-empty string")
    if "primary" not in data:
        raise ValueError(f"{source}: 'primary' is required")
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError(f"{source}: [variables] must be a table")
    for key in [k for k in COLOURS if k in data] + [f"variables.{k}" for k in variables]:
        value = variables[key[10:]] if key.startswith("variables.") else data[key]
        if not isinstance(value, str):
            raise ValueError(f"{source}: '{key}' must be a string")
        if not key.startswith("variables."):
            try:
                Color.parse(value)
            except ColorParseError:
                raise ValueError(f"{source}: '{key}' is not a colour: {value!r}") from None
    return Theme(name=data["name"], dark=bool(data.get("dark", True)),
                 variables={str(k): str(v) for k, v in variables.items()},
                 **{k: data[k] for k in COLOURS if k in data})


def load_all(sources: Iterable[tuple[str, str]]) -> tuple[list[Theme], list[str]]:
    """Every theme that parses, and a problem line for each one that does not."""
    themes: list[Theme] = []
    problems: list[str] = []
    for source, text in sources:
        try:
            themes.append(parse(source, text))
        except ValueError as exc:
            problems.append(str(exc))
    return themes, problems
