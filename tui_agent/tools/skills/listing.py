"""The extension's requests on the wire: whether a server declares skills (and
``directoryRead``), its ``skills/list`` paged through at connect, and
``resources/directory/read`` for a dynamic skill's files.

Every loop is bounded: pages (:data:`MAX_PAGES`, and a cursor seen before ends the
listing), skills kept per server (:data:`MAX_SKILLS`), the time a listing may take at
connect (:data:`LIST_WITHIN`), and a directory walk's depth and size. What is cut short
or skipped becomes a note naming the server and the skill, never an error that stops the
server: its tools are offered all the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.config.printable import safe_name
from tui_agent.tools.errors import describe_error
from tui_agent.tools.skills.entries import (
    MAX_FILES,
    SKILLS_EXTENSION,
    ServerSkill,
    entry_of,
    path_problem,
)
from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from mcp import Client

MAX_PAGES = 100
"""Pages of ``skills/list`` (and of one directory) read at most."""
MAX_SKILLS = 1_000
"""Skills of one server kept; a longer listing is cut with a note."""
MAX_NOTES = 20
"""Notes kept of one listing (a listing of a thousand broken entries is told in short)."""
LIST_WITHIN = 10.0
"""Seconds a server's whole skill listing may take at connect."""
MAX_DEPTH = 8
"""Directory levels a dynamic skill's walk goes down."""
DIRECTORY = "inode/directory"


@dataclass(frozen=True, slots=True)
class Found:
    """What a server's ``skills/list`` gave at connect."""

    skills: tuple[ServerSkill, ...] = ()
    notes: tuple[str, ...] = ()
    """Entries skipped and listings cut short, each naming the server (and skill)."""
    directory_read: bool = False
    """The server declared ``directoryRead`` (it answers ``resources/directory/read``)."""


def declared(client: Any) -> dict[str, Any] | None:
    """The server's settings of the skills extension, or None when it does not declare it."""
    extensions = getattr(client.server_capabilities, "extensions", None) or {}
    settings = extensions.get(SKILLS_EXTENSION) if isinstance(extensions, dict) else None
    if settings is None:
        return None
    return settings if isinstance(settings, dict) else {}


async def look_for_skills(client: Client, server: str, within: float = LIST_WITHIN) -> Found:
    """Every skill ``server`` lists (nothing of any skill is read). A server that declares
    no skills: nothing, and no request."""
    import anyio

    settings = declared(client)
    if settings is None:
        return Found()
    name = safe_name(server)
    skills: dict[str, ServerSkill] = {}
    notes: list[str] = []
    seen: set[str] = set()
    cursor: str | None = None
    with anyio.move_on_after(within) as scope:
        try:
            for _ in range(MAX_PAGES):
                page = await request(client, "skills/list",
                                     {"cursor": cursor} if cursor else {})
                _take(server, page.get("skills"), skills, notes)
                if len(skills) > MAX_SKILLS:
                    break
                cursor = page.get("nextCursor")
                if not isinstance(cursor, str) or not cursor:
                    break
                if cursor in seen:
                    notes.append(f"server '{name}': skills/list gave a cursor it gave "
                                 "before; its listing stops there")
                    break
                seen.add(cursor)
            else:
                notes.append(f"server '{name}': skills/list goes on past {MAX_PAGES} pages; "
                             "the rest is not read")
        except Exception as exc:
            notes.append(f"server '{name}': skills/list failed: {describe_error(exc)}")
    if scope.cancelled_caught:
        notes.append(f"server '{name}': skills/list took longer than {within:g} s; the "
                     "skills listed until then are offered")
    if len(skills) > MAX_SKILLS:
        notes.append(f"server '{name}' lists {len(skills):,} skills; the first "
                     f"{MAX_SKILLS:,} are offered")
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES:] = [f"server '{name}': {len(notes) - MAX_NOTES:,} more entries "
                             "are not offered"]
    return Found(tuple(skills.values())[:MAX_SKILLS], tuple(notes),
                 settings.get("directoryRead") is True)


def _take(server: str, entries: Any, skills: dict[str, ServerSkill], notes: list[str]) -> None:
    name = safe_name(server)
    if not isinstance(entries, list):
        notes.append(f"server '{name}': a skills/list page has no list of skills")
        return
    for raw in entries:
        if len(skills) > MAX_SKILLS:
            return  # one more than kept, so that the cut is told
        try:
            skill = entry_of(server, raw)
        except ValueError as exc:
            notes.append(f"server '{name}': {exc}; it is not offered")
            continue
        if skill.uri in skills:
            notes.append(f"server '{name}': skill {clean(skill.uri)[:200]} is listed twice; "
                         "the first entry is kept")
            continue
        skills[skill.uri] = skill


async def request(client: Any, method: str, params: dict[str, Any],
                  timeout: float | None = None) -> dict[str, Any]:
    """One request of the extension (the SDK has no type for it): its result as a dict."""
    import mcp.types as types
    from pydantic import TypeAdapter

    class Params(types.PaginatedRequestParams):
        uri: str | None = None

    message = types.Request[Params, str](method=method, params=Params.model_validate(params))
    result = await client.session.send_request(message, TypeAdapter(dict[str, Any]),
                                               request_read_timeout_seconds=timeout)
    return result if isinstance(result, dict) else {}


async def directory_files(ask: Callable[[str, str | None], Any], skill: ServerSkill
                          ) -> tuple[str, ...]:
    """The paths of a dynamic skill's files, walking its directory with
    ``resources/directory/read`` (``ask(uri, cursor)`` sends one). Children outside the
    skill's directory are left out; the walk stops at :data:`MAX_DEPTH` levels and
    :data:`~.entries.MAX_FILES` files."""
    files: list[str] = []
    todo = [(skill.root, 0)]
    while todo and len(files) < MAX_FILES:
        directory, depth = todo.pop(0)
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await ask(directory, cursor)
            for child in page.get("resources") or []:
                uri = child.get("uri") if isinstance(child, dict) else None
                if not isinstance(uri, str) or not uri.startswith(skill.root + "/"):
                    continue
                if child.get("mimeType") == DIRECTORY:
                    if depth + 1 < MAX_DEPTH:
                        todo.append((uri, depth + 1))
                elif uri != skill.uri and len(files) < MAX_FILES and \
                        path_problem(path := uri.removeprefix(skill.root + "/")) is None:
                    files.append(path)
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
    return tuple(files)
