"""``tui-agent mcp import``: the servers other clients configured, listed with where
each comes from; the ones named (or ``--all``) written to the config file.

Nothing is started: an import may bring many servers, and ``tui-agent servers`` starts
them all and tells how each went. A name tui-agent already has is a clash: named
explicitly, it refuses the whole import (exit 2, nothing written) unless ``--force``;
with ``--all`` the clashing ones are left out and listed, the rest imported. ``--all``
also leaves out the servers of the working directory's project files (``.mcp.json``,
``.cursor/mcp.json``, ``.vscode/mcp.json``): copied into the user's file they would run
everywhere without the person ever agreeing to the project, so each is imported only
when named. When two
clients define the same name, the first found (user files before the project's, in the
order of :func:`~tui_agent.config.clients.sources`) is the one imported.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tui_agent.config.clients import Found, discover, from_file
from tui_agent.config.errors import ConfigError
from tui_agent.config.printable import safe_name
from tui_agent.config.scopes import Target, keep_trusted, target, trusted
from tui_agent.config.server_edit import Place, add_servers, check_name, place_finder
from tui_agent.headless.mcp import layers
from tui_agent.headless.mcp.again import Again, word
from tui_agent.tools.text import clean


def import_servers(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        found, problems = (from_file(args.source), []) if args.source else discover()
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\n")
        return 2
    for problem in problems:
        err.write(f"tui-agent: warning: {problem}\n")
    if not found:
        out.write("no MCP servers found in Claude Desktop, Claude Code, Cursor, VS Code, "
                  "Windsurf or Zed's config files (or give one: --from FILE)\n")
        return 0
    where = target(args.scope, args.config, os.environ)
    files = _with_target(layers(args), where)
    try:
        taken = place_finder(files)
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\n")
        return 2
    first = _first(found)
    if not args.names and not args.all:
        again = Again(args, where)
        _list(found, first, taken, again, out)
        out.write(f"\nimport them with '{again('--all')}', or some by name: "
                  f"'{again('NAME...')}'{again.why()}\n")
        return 0
    chosen, refused = _choose(args, first, taken)
    if refused:
        for line in refused:
            err.write(f"tui-agent: {line}\n")
        err.write("tui-agent: nothing was imported\n")
        return 2
    return _write(args, where, chosen, files, first, out, err)


def _with_target(files: list[tuple[str, Path]], where: Target) -> list[tuple[str, Path]]:
    """The layers read now, and the file written when they leave it out (a project that
    is not trusted yet, ``--no-project``): a name it holds is a clash too, found before
    anything is written."""
    if not where.file.exists() or any(f.resolve() == where.file.resolve() for _, f in files):
        return files
    return [*files, (where.kind, where.file)]


def _first(found: list[Found]) -> dict[str, Found]:
    first: dict[str, Found] = {}
    for item in found:
        first.setdefault(item.name, item)
    return first


Taken = Callable[[str], list[Place]]
"""Where a name is configured already (:func:`place_finder` over the files read now)."""


def _list(found: list[Found], first: dict[str, Found], taken: Taken, again: Again,
          out: IO[str]) -> None:
    width = max(len(safe_name(f.name)) for f in found)
    for item in found:
        status = _status(item, first, taken, again)
        out.write(f"{safe_name(item.name):<{width}}  {item.where()}"
                  + (f"  ({status})" if status else "") + "\n")
        for warning in item.warnings:
            out.write(f"    note: {clean(warning)}\n")
        for warning in item.secrets:
            out.write(f"    warning: {clean(warning)}\n")
        importable = item.server is not None and status == _transport(item)
        if item.source.project and first[item.name] is item and importable:
            out.write(f"    note: {_projects(item, again)}\n")


def _projects(item: Found, again: Again) -> str:
    return (f"this project's server: --all leaves it out; if you trust the project, "
            f"'{again(word(safe_name(item.name)))}' imports it")


def _status(item: Found, first: dict[str, Found], taken: Taken, again: Again, *,
            left_out: bool = False) -> str:
    """Why ``item`` cannot be imported, or (``left_out``: why ``--all`` passed it over)
    its transport."""
    if item.server is None:
        return f"cannot import: {clean(item.problem or 'invalid')}"
    if first[item.name] is not item:
        return f"another '{safe_name(item.name)}' is listed first; that one is imported"
    problem = check_name(item.name) or _unset(item)
    if problem:
        return f"cannot import: {problem}"
    there = taken(item.name)
    if there:
        return f"already configured at {there[-1]}"
    if left_out and item.source.project:
        return _projects(item, again)
    return _transport(item)


def _transport(item: Found) -> str:
    """What the list says of a server that can be imported."""
    return "transport " + str(item.server.transport if item.server else None)


def _unset(item: Found) -> str | None:
    """Why ``item`` cannot go in yet: the ``${VAR}`` it names that the environment does not
    set (a config naming an unset variable does not load, so it would stop every command)."""
    import os

    from tui_agent.wiring.mcp_add import unset_variables

    unset = unset_variables(item.table(), os.environ)
    if not unset:
        return None
    names = ", ".join("${" + name + "}" for name in unset)
    return (f"it names {names}, not set in the environment (a config naming an unset "
            "variable does not load): set it, then import")


def _choose(args: argparse.Namespace, first: dict[str, Found],
            taken: Taken) -> tuple[list[Found], list[str]]:
    """The servers to write, and why a named one cannot be (all or nothing)."""
    chosen: list[Found] = []
    refused: list[str] = []
    names = args.names or [n for n, item in first.items() if not item.source.project]
    for name in names:
        item = first.get(name)
        if item is None:
            refused.append(f"no server named '{clean(name)}' was found (found: "
                           f"{', '.join(sorted(first))})")
            continue
        problem = item.problem if item.server is None else (check_name(name)
                                                            or _unset(item))
        there = taken(name)
        if problem:
            if args.names:
                refused.append(f"{clean(name)} from {item.where()}: {clean(problem)}")
            continue
        if there and not args.force:
            if args.names:
                refused.append(f"a server named '{name}' is already configured at "
                               f"{there[-1]} (--force replaces it)")
            continue
        chosen.append(item)
    return chosen, refused


def _write(args: argparse.Namespace, where: Target, chosen: list[Found],
           files: list[tuple[str, Path]], first: dict[str, Found], out: IO[str],
           err: IO[str]) -> int:
    """Every chosen server in one write: all of them, or (the file unreadable, a name
    taken after all) none, with the file byte for byte as it was."""
    was_trusted = where.project_root is None or trusted(where.project_root)
    try:
        lines = add_servers(where.file, [(c.name, c.table()) for c in chosen],
                            replace=args.force) if chosen else []
    except ConfigError as exc:
        err.write(f"tui-agent: {exc}\ntui-agent: nothing was imported\n")
        return 2
    if where.project_root is not None and chosen and (was_trusted or args.trust_project):
        keep_trusted(where.project_root)
    for item, line in zip(chosen, lines, strict=True):
        out.write(f"imported {safe_name(item.name)} from {item.where()} into "
                  f"{where.file}:{line}\n")
        for warning in item.secrets:
            err.write(f"tui-agent: warning: {clean(warning)}\n")
    written = {c.name for c in chosen}
    left = [n for n in first if n not in written] if args.all else []
    taken = place_finder(files) if left else None  # the files as they are now
    again = Again(args, where)
    for name in left:
        assert taken is not None
        out.write(f"left out {safe_name(name)}: "
                  f"{_status(first[name], first, taken, again, left_out=True)}\n")
    if chosen:
        out.write(again.servers())
    return 0
