"""Themes as files: the ones shipped in ``themes/`` (inside the package as
``tui_agent.themes``) and the user's own in ``$XDG_CONFIG_HOME/tui-agent/themes/``.

A theme file is TOML with ``name``, ``dark`` and the colours Textual's ``Theme``
takes (``primary`` is required), plus an optional ``[variables]`` table. A bad
file is reported (file and what was wrong) and skipped; it never stops the app.
"""

from __future__ import annotations

import importlib.util
import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "tui-agent-night"
BUNDLED_PREFIX = "tui-agent-"
"""What the name of every theme shipped with tui-agent starts with (``night.toml`` holds
``tui-agent-night``)."""
COLOURS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
           "background", "surface", "panel", "boost")


def bundled_files(only: str | None = None) -> list[tuple[str, str]]:
    """(name, text) of every theme shipped with tui-agent; with ``only`` (a theme's name,
    e.g. ``tui-agent-night``), of that one alone, if it is shipped (the first frame needs
    no other)."""
    spec = importlib.util.find_spec("tui_agent.themes")
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    wanted = None if only is None else f"{only.removeprefix(BUNDLED_PREFIX)}.toml"
    if only is not None and not only.startswith(BUNDLED_PREFIX):
        return []
    if folders and all(folder.is_dir() for folder in folders):  # files: every pip install
        return sorted((name, (folder / name).read_text(encoding="utf-8"))
                      for folder in folders for name in os.listdir(folder)
                      if name.endswith(".toml") and wanted in (None, name))
    # Inside a zip: importlib.resources reads it (with zipfile: kept off the usual path,
    # ~3 ms on the way to the first frame).
    from importlib import resources

    return sorted((entry.name, entry.read_text(encoding="utf-8"))
                  for entry in resources.files("tui_agent.themes").iterdir()
                  if entry.name.endswith(".toml") and wanted in (None, entry.name))


def has_user_files(directory: Path) -> bool:
    """Whether the user keeps any theme files (which may redefine a shipped theme)."""
    try:
        return any(name.endswith(".toml") for name in os.listdir(directory))
    except OSError:
        return False


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


def first_themes(wanted: str, user: Path) -> tuple[list[Theme], list[str], bool]:
    """The themes to register before the first frame, the problems found reading them, and
    whether shipped themes are left to read after it. A shipped theme is read alone (unless
    the user keeps theme files in ``user``, which may redefine it); else every theme is."""
    first = [] if has_user_files(user) else bundled_files(only=wanted)
    themes, problems = load_all(first or [*bundled_files(), *user_files(user)])
    return themes, problems, bool(first)

