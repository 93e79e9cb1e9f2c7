"""Add and remove ``[servers.NAME]`` tables in the files a person keeps, for
``tui-agent mcp add|remove|import`` and ``/mcp add``.

A TOML file is edited with tomlkit, so every comment, blank line and table order the
person wrote survives; a JSON file (a project's ``.mcp.json``) is rewritten with the
indentation it had. Writes are atomic (:mod:`tui_agent.config.atomic`). Finding where a
name is already defined reads each file on its own, without validating it: one server
entry that does not validate must not stop a person from adding or removing another.
A file that cannot be parsed at all stops every edit, though: what it defines is
unknown, so a name it may hold could not be checked, and ``run`` would refuse the
config anyway.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.config.atomic import write_text
from tui_agent.config.errors import ConfigError
from tui_agent.config.locate import json_line, toml_line
from tui_agent.config.printable import safe_name

NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""A server name ``mcp add`` writes: the characters a tool name the model sees may hold
(``<server>__<tool>``, at most 64 in all), short enough to leave room for the tool's."""


def read_config_text(file: Path) -> str:
    """The file's text, or :class:`ConfigError` naming it (imported here, not at the top:
    the command line's parser imports this module, and the reader brings pydantic)."""
    from tui_agent.config.reading import read_config_text as read

    return read(file)


def check_name(name: str) -> str | None:
    """Why ``name`` cannot name a server, or None."""
    if not NAME.fullmatch(name):
        return (f"'{safe_name(name)}' is not a server name: use 1-40 letters, digits, '-' or "
                "'_' (it starts the names of its tools, <server>__<tool>)")
    if "__" in name:
        return f"'{safe_name(name)}' is not a server name: '__' separates a server from its tool"
    return None


@dataclass(frozen=True)
class Place:
    """Where a server is defined: the layer's kind (``user``, ``project``...), the file,
    the line (None when not found), and the key path to its entry."""

    kind: str
    file: Path
    line: int | None
    path: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else str(self.file)


def servers_in(file: Path) -> tuple[dict[str, tuple[tuple[str, ...], Any]], str]:
    """Every server entry in ``file`` (name -> key path and raw value) and its text.
    Raises :class:`ConfigError` naming the file when it cannot be read or parsed."""
    text = read_config_text(file)
    if file.suffix.lower() == ".json":
        from tui_agent.config.jsonc import read_json

        data = read_json(text, file)  # worded as the loader words it
        for key in ("mcpServers", "servers"):
            block = data.get(key) if isinstance(data, dict) else None
            if isinstance(block, dict):
                return {n: ((key, n), v) for n, v in block.items()}, text
            if isinstance(block, list):
                return {str(v.get("name")): ((key, str(i)), v) for i, v in enumerate(block)
                        if isinstance(v, dict)}, text
        return {}, text
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", file) from None
    block = data.get("servers")
    if not isinstance(block, dict):
        return {}, text
    return {n: (("servers", n), v) for n, v in block.items()}, text


def places(files: Sequence[tuple[str, Path]], name: str) -> list[Place]:
    """Where ``name`` is defined among ``files`` (kind, path), lowest precedence first.
    A file that does not exist is passed over (``mcp add --config NEW`` creates it); one
    that cannot be read or parsed raises :class:`ConfigError`: whether it holds the name
    is unknown."""
    found = []
    for kind, file in files:
        if not file.exists():
            continue
        entries, text = servers_in(file)
        if name in entries:
            path = entries[name][0]
            locate = json_line if file.suffix.lower() == ".json" else toml_line
            found.append(Place(kind, file, locate(text, path), path))
    return found


def place_finder(files: Sequence[tuple[str, Path]]) -> Callable[[str], list[Place]]:
    """:func:`places` for many names (``mcp import`` asks for each server it lists):
    every file read and parsed once, its header lines found in one pass, not once per
    name. Raises :class:`ConfigError` as :func:`places` does, when made."""
    read = []
    for kind, file in files:
        if file.exists():
            entries, text = servers_in(file)
            read.append((kind, file, entries, text,
                         None if file.suffix.lower() == ".json" else header_lines(text)))

    def find(name: str) -> list[Place]:
        found = []
        for kind, file, entries, text, headers in read:
            if name in entries:
                path = entries[name][0]
                line = (headers.get(name) if headers is not None else None) or (
                    json_line(text, path) if headers is None else toml_line(text, path))
                found.append(Place(kind, file, line, path))
        return found

    return find


def add_server(file: Path, name: str, table: Mapping[str, Any], *, replace: bool) -> int:
    """Write ``[servers.NAME]`` with ``table``'s keys into the TOML ``file`` (created when
    absent), or replace the one there when ``replace``; return the line of its header.

    The file's own text is kept byte for byte: a new table is appended at its end, a
    replaced one is written where the old one stood. Raises :class:`ConfigError` when the
    file cannot be parsed or written, or already has the name and ``replace`` is False."""
    return add_servers(file, [(name, table)], replace=replace)[0]


def add_servers(file: Path, tables: Sequence[tuple[str, Mapping[str, Any]]], *,
                replace: bool) -> list[int]:
    """:func:`add_server` for several servers in one write (``mcp import``): every edit
    is made on the text in memory and the file written once, so a name found taken
    half-way leaves the file as it was, not half imported. The header lines, in order."""
    text = read_config_text(file) if file.exists() else ""
    present = set(_parsed_servers(text, file))
    # A new server is a table appended at the end: its block alone is made, and the text
    # parsed once at the end, not once per server (1,500 servers took 78 s that way).
    # One that is there already is edited in place, which needs the text as it is now.
    pending: list[str] = []
    for name, table in tables:
        if name in present:
            text, pending = _appended(text, pending), []
            text = _with_server(text, file, name, table, replace)
        else:
            pending.append(table_text(name, table))
            present.add(name)
    text = _appended(text, pending)
    final = _parsed_servers(text, file, edited=True)
    missing = [n for n, _ in tables if n not in final]
    if missing:
        raise ConfigError(f"could not add servers.{missing[0]} cleanly; nothing was "
                          "written", file)
    _write(file, text)
    headers = header_lines(text)
    return [headers.get(name) or toml_line(text, ("servers", name)) or 1
            for name, _ in tables]


def _parsed_servers(text: str, file: Path, *, edited: bool = False) -> dict[str, Any]:
    """The ``servers`` table of TOML ``text`` (``edited``: the text is ours to write,
    so a parse error is said as an edit that would break the file)."""
    try:
        servers = tomllib.loads(text).get("servers", {})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the edit would leave invalid TOML ({exc}); nothing was written"
                          if edited else f"not valid TOML: {exc}", file) from None
    if not isinstance(servers, dict):
        raise ConfigError("'servers' is not a table", file)
    return servers


def _appended(text: str, blocks: Sequence[str]) -> str:
    """``text`` with each block after it, a blank line between (as one written at a time
    would be), in one join."""
    parts, tail, filled = [text], text, bool(text.strip())
    for block in blocks:
        if tail and not tail.endswith("\n"):
            parts.append("\n")
        if filled:
            parts.append("\n")
        parts.append(block)
        tail, filled = block, filled or bool(block.strip())
    return "".join(parts)


def header_lines(text: str) -> dict[str, int]:
    """The line of each ``[servers.NAME]`` header in TOML ``text``, in one pass."""
    out: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "[" in line:
            key = _header(line)
            if key is not None and len(key) == 2 and key[0] == "servers":
                out.setdefault(key[1], number)
    return out


def _with_server(text: str, file: Path, name: str, table: Mapping[str, Any],
                 replace: bool) -> str:
    """``text`` with ``[servers.NAME]`` added or replaced (checked, not yet written)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", file) from None
    servers = data.get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError("'servers' is not a table", file)
    if name in servers and not replace:
        line = toml_line(text, ("servers", name))
        raise ConfigError(f"{f'line {line}: ' if line else ''}a server named '{name}' is "
                          "already here (--force replaces it)", file)
    block = table_text(name, table)
    lines = text.splitlines(keepends=True)
    # The comment lines above its header stay: the person's words about the server.
    span = _span(lines, name, above=False) if name in servers else None
    if span is not None:
        after = lines[span[1]:]
        spaced = block + ("\n" if after and after[0].strip() else "")
        new = "".join([*lines[:span[0]], spaced, *after])
    elif name in servers:  # defined some other way (an inline table): tomlkit moves it
        new = _tomlkit_edit(text, file, name, table)
    else:
        new = text + ("\n" if text and not text.endswith("\n") else "") \
            + ("\n" if text.strip() else "") + block
    _check(new, file, name, present=True)
    return new


def table_text(name: str, table: Mapping[str, Any]) -> str:
    """``[servers.NAME]`` and its keys as TOML (maps as inline tables)."""
    import tomlkit

    entry = tomlkit.table()
    for key, value in table.items():
        entry[key] = _inline(value)
    doc = tomlkit.document()
    servers = tomlkit.table(is_super_table=True)
    servers.append(name, entry)
    doc["servers"] = servers
    return tomlkit.dumps(doc)


def _inline(value: Any) -> Any:
    """Maps as inline tables (``env = { KEY = "v" }``), the form a person writes."""
    if isinstance(value, Mapping):
        import tomlkit

        inline = tomlkit.inline_table()
        inline.update(dict(value))
        return inline
    return value


def _span(lines: list[str], name: str, *, above: bool = True) -> tuple[int, int] | None:
    """The lines of ``[servers.NAME]`` (with its sub-tables, and, when ``above``, the
    comment lines right above its header, which are about it), or None when no header
    names it. Comment lines right above the next table's header are not in it: they are
    about that table."""
    own = ("servers", name)
    start = None
    for number, line in enumerate(lines):
        key = _header(line)
        if key is None:
            continue
        if start is None and key == own:
            start = number
        elif start is not None and key[:2] != own:
            return _widen(lines, start, number, above)
    return None if start is None else _widen(lines, start, len(lines), above)


def _widen(lines: list[str], start: int, end: int, above: bool) -> tuple[int, int]:
    while end > start + 1 and lines[end - 1].lstrip().startswith("#"):
        end -= 1
    while above and start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return start, end


def _header(line: str) -> tuple[str, ...] | None:
    from tui_agent.config.locate import _TABLE, _split_dotted

    found = _TABLE.match(line)
    return _split_dotted(found.group("key")) if found else None


def _tomlkit_edit(text: str, file: Path, name: str, table: Mapping[str, Any] | None) -> str:
    """Replace (``table``) or delete (None) a server that has no header of its own."""
    import tomlkit

    doc = tomlkit.parse(text)
    servers = doc["servers"]
    if table is None:
        del servers[name]
    else:
        entry = tomlkit.inline_table()
        entry.update({k: _inline(v) for k, v in table.items()})
        servers[name] = entry
    return tomlkit.dumps(doc)


def _check(text: str, file: Path, name: str, *, present: bool) -> None:
    """The edit left valid TOML with ``name`` there (or gone): else nothing is written."""
    try:
        servers = tomllib.loads(text).get("servers", {})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the edit would leave invalid TOML ({exc}); nothing was "
                          "written", file) from None
    if (name in servers) != present:
        raise ConfigError(f"could not {'add' if present else 'remove'} servers.{name} "
                          "cleanly; nothing was written", file)


def remove_server(place: Place) -> None:
    """Take the server at ``place`` out of its file, leaving the rest as it was."""
    text = read_config_text(place.file)
    if place.file.suffix.lower() == ".json":
        _write(place.file, _remove_json(text, place))
        return
    name = place.path[-1]
    lines = text.splitlines(keepends=True)
    span = _span(lines, name)
    if span is None:
        new = _tomlkit_edit(text, place.file, name, None)
    else:
        before, after = lines[:span[0]], lines[span[1]:]
        if before and not before[-1].strip() and after and not after[0].strip():
            after = after[1:]  # one blank line between what was around it, not two
        new = "".join(before + after)
    _check(new, place.file, name, present=False)
    _write(place.file, new)


def _remove_json(text: str, place: Place) -> str:
    from tui_agent.config.writeback import _json_indent

    doc = json.loads(text)
    block = doc.get(place.path[0])
    if isinstance(block, dict):
        block.pop(place.path[1], None)
    elif isinstance(block, list):
        del block[int(place.path[1])]
    return json.dumps(doc, indent=_json_indent(text), ensure_ascii=False) + "\n"


def _write(file: Path, text: str) -> None:
    try:
        write_text(file, text)
    except OSError as exc:
        raise ConfigError(f"cannot write it: {exc}", file) from None
