"""``tui-agent mcp list``, ``get`` and ``remove``: the servers as the files define them.

Each file is read on its own and each entry validated on its own, so one broken entry
is shown as such beside the rest instead of hiding them. Values are shown as written
(``${VAR}`` unexpanded); an env or header value written out in full, and an OAuth
secret, are hidden.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tui_agent.config.errors import ConfigError
from tui_agent.config.printable import safe_name
from tui_agent.config.scopes import keep_trusted, trusted
from tui_agent.config.server_edit import Place, places, remove_server, servers_in
from tui_agent.config.urls import HIDDEN
from tui_agent.headless.mcp import layers
from tui_agent.tools.text import clean


@dataclass
class Entry:
    """One server in one file: where, and what it validates to (or why it does not)."""

    name: str
    place: Place
    server: Any
    problems: list[str] | None
    shadowed: bool = False


def entries(files: list[tuple[str, Path]]) -> list[Entry]:
    """Every server in ``files``; a later file's server of the same name shadows the
    earlier one, as the loader merges them. Raises :class:`ConfigError` for a file that
    cannot be read or parsed (never "no servers" for a file not read)."""
    found: list[Entry] = []
    for kind, file in files:
        servers, text = servers_in(file)
        for name in servers:
            place = places([(kind, file)], name)[0]
            server, problems = _validate(name, servers[name][1], place, text)
            for earlier in found:
                if earlier.name == name:
                    earlier.shadowed = True
            found.append(Entry(name, place, server, problems))
    return found


def _validate(name: str, raw: Any, place: Place,
              text: str) -> tuple[Any, list[str] | None]:
    """The entry as ``run`` would take it, or its problems worded as ``run`` words them
    (the line of the key at fault, the dotted key, "did you mean")."""
    from pydantic import ValidationError

    from tui_agent.config.locate import json_line, toml_line
    from tui_agent.config.mcp_json import convert
    from tui_agent.config.models import ServerConfig
    from tui_agent.config.reading import Origin, describe

    json = place.file.suffix.lower() == ".json"
    locate = (json_line if json else toml_line)

    def line(loc: Any) -> int | None:
        return locate(text, loc)

    try:
        if json:
            return convert(name, raw, Origin(place.file, place.path, line))[0], None
        return ServerConfig.model_validate(raw), None
    except ConfigError as exc:
        return None, exc.problems
    except ValidationError as exc:
        return None, describe(exc, line, place.path)


def _project_root() -> Path | None:
    """The root of the project the working directory is in (the one ``layers`` read)."""
    from tui_agent.config.project import find_project

    found = find_project(Path.cwd())
    return found.root if found is not None else None


def _held(args: argparse.Namespace) -> bool:
    """Whether the project's servers wait for the person's agreement."""
    if args.no_project:
        return False
    root = _project_root()
    return root is not None and not trusted(root, os.environ)


def listing(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        found = entries(layers(args))
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\n")
        return 2
    if not found:
        out.write("no MCP servers are configured ('tui-agent mcp add NAME -- COMMAND' adds "
                  "one; 'tui-agent mcp import' finds the ones other clients have)\n")
        return 0
    held = _held(args)
    width = max(len(safe_name(e.name)) for e in found)
    for entry in found:
        transport = entry.server.transport if entry.server is not None else "invalid"
        notes = list(_notes(entry, held))
        out.write(f"{safe_name(entry.name):<{width}}  {transport:<14} {entry.place.kind:<12} "
                  f"{entry.place}" + (f"  ({'; '.join(notes)})" if notes else "") + "\n")
        for problem in entry.problems or ():
            out.write(f"    invalid: {clean(problem)}\n")
    return 0


def _notes(entry: Entry, held: bool) -> Iterator[str]:
    if entry.server is not None and entry.server.disabled:
        yield "disabled"
    if entry.shadowed:
        yield "replaced by a later file's"
    if held and entry.place.kind == "project":
        yield "the project is not trusted yet"


def _find(args: argparse.Namespace, err: IO[str]) -> list[Entry] | None:
    try:
        every = entries(layers(args))
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\n")
        return None
    found = [e for e in every if e.name == args.name]
    if not found:
        names = sorted({e.name for e in every})
        err.write(f"tui-agent: no server named '{safe_name(args.name)}' (the servers: "
                  f"{', '.join(safe_name(n) for n in names) or 'none'})\n")
        return None
    return found


def get(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    found = _find(args, err)
    if found is None:
        return 2
    entry = found[-1]
    out.write(f"{safe_name(entry.name)}\n  scope: {entry.place.kind}\n  file: {entry.place}\n")
    if entry.problems:
        for problem in entry.problems:
            out.write(f"  invalid: {clean(problem)}\n")
        return 1
    for key, value in shown(entry.server):
        out.write(f"  {key}: {clean(value)}\n")
    for other in found[:-1]:
        out.write(f"  (also at {other.place}, which this one replaces)\n")
    return 0


def shown(server: Any) -> list[tuple[str, str]]:
    """The settings a server sets (defaults left out), as ``mcp get`` shows them."""
    from tui_agent.config.models import ServerConfig
    from tui_agent.config.show import _oauth_table, _value
    from tui_agent.config.urls import mask_url

    lines = []
    for key, info in ServerConfig.model_fields.items():
        value = getattr(server, key)
        if key != "transport" and value == info.get_default(call_default_factory=True):
            continue
        if key in ("env", "headers"):
            value = {k: v if "${" in v else HIDDEN for k, v in value.items()}
        elif key == "url":
            value = mask_url(value)
        elif key == "oauth":
            value = _oauth_table(value, frozenset())
        lines.append((key, _value(value) if not isinstance(value, str) else value))
    return lines


def remove(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    found = _find(args, err)
    if found is None:
        return 2
    place = found[-1].place
    root = _project_root() if place.kind == "project" else None
    was_trusted = root is not None and trusted(root, os.environ)
    try:
        remove_server(place)
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\n")
        return 2
    if root is not None and was_trusted:
        # The person's own edit, as ``mcp add`` keeps it: removing a server must not
        # turn the project's other servers into ones waiting for agreement again.
        keep_trusted(root, os.environ)
    out.write(f"removed {safe_name(args.name)} from {place.file} ({place.kind})\n")
    for other in found[:-1]:
        out.write(f"note: '{safe_name(args.name)}' is still defined at {other.place}; run "
                  "'tui-agent mcp remove' again to remove that one too\n")
    return 0
