"""The hub's side of skills over MCP: the skills every server listed, and reading a
skill's file, verified, from that skill's own server only. A base of
:class:`~tui_agent.tools.hub.Hub`, which owns the connections; each connection keeps what
its server listed at connect (:class:`~.listing.Found`) and which of its skills are
refused.

A read is made only when asked (the skill tool loads a skill by reading its ``SKILL.md``,
then the files the model asks for): nothing at connect, listing or approval. Each read
goes to the skill's server (``resources/read`` over that server's session), is checked
against the skill's entry (:mod:`.verify`), and a mismatch refuses the skill: that read
and every later one raise :class:`~.entries.SkillRefused` without asking the server,
until it lists the skill differently (a new :attr:`~.entries.ServerSkill.digest_key`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tui_agent.config.printable import safe_name
from tui_agent.tools.errors import describe_error
from tui_agent.tools.skills.entries import (
    MAX_SKILL_BYTES,
    SKILL_FILE,
    ServerSkill,
    SkillError,
    SkillRefused,
    file_uri,
)
from tui_agent.tools.skills.listing import Found, directory_files, request
from tui_agent.tools.skills.verify import check_file, served_bytes
from tui_agent.tools.text import clean


class ServerConnection(Protocol):
    """What the shelf needs of a server's connection
    (:class:`~tui_agent.tools.connection.ServerConnection`, which imports this package)."""

    state: str
    skills: Found
    refused_skills: dict[str, tuple[str, str]]
    skill_bytes: dict[str, int]

    async def request(self, what: Callable[[Any], Any]) -> Any: ...

OFFERING = ("connected", "degraded", "idle")
"""States of a server whose skills are offered (an idle server starts again for a read)."""


class SkillShelf:
    """The skills of the servers in ``connections`` (the hub's)."""

    connections: Any
    """Server name -> :class:`ServerConnection` (the hub's)."""

    def server_skills(self) -> tuple[ServerSkill, ...]:
        """Every skill the offered servers listed, in server then listing order."""
        return tuple(skill for conn in self.connections.values() if conn.state in OFFERING
                     for skill in conn.skills.skills)

    def skill_notes(self) -> tuple[str, ...]:
        """What was wrong with the servers' listings (entries skipped, listings cut)."""
        return tuple(note for conn in self.connections.values() for note in conn.skills.notes)

    def skill_refusal(self, server: str, uri: str) -> str | None:
        """Why the skill is refused (None: it is not)."""
        conn: ServerConnection | None = self.connections.get(server)
        if conn is None:
            return None
        skill = _listed(conn, uri)
        refusal = conn.refused_skills.get(uri)
        if skill is None or refusal is None or refusal[0] != skill.digest_key:
            return None
        return refusal[1]

    async def skill_files(self, server: str, uri: str) -> tuple[str, ...]:
        """The paths of the skill's files besides ``SKILL.md``: its manifest's (nothing
        asked of the server), or for a dynamic skill what ``resources/directory/read``
        finds where the server offers it (else nothing). Raises :class:`SkillError`."""
        conn, skill = self._skill(server, uri)
        if skill.paths is not None:
            return skill.paths[1:]
        if not conn.skills.directory_read:
            return ()

        async def ask(directory: str, cursor: str | None) -> Any:
            params = {"uri": directory, **({"cursor": cursor} if cursor else {})}
            return await conn.request(lambda c: request(c, "resources/directory/read", params))

        try:
            return await directory_files(ask, skill)
        except Exception as exc:
            raise SkillError(f"server '{safe_name(server)}' could not list the files of skill "
                             f"{skill.name}: {describe_error(exc)}") from None

    async def read_skill_file(self, server: str, skill_uri: str,
                              relative_path: str | None = None) -> str:
        """The text of the skill's file at ``relative_path`` (None: its ``SKILL.md``),
        read from ``server`` and verified against the skill's entry. Raises
        :class:`SkillRefused` when it does not match (and for every read of a refused
        skill), :class:`SkillError` when it cannot be read."""
        conn, skill = self._skill(server, skill_uri)
        if (why := self.skill_refusal(server, skill_uri)) is not None:
            raise SkillRefused(why)
        uri = file_uri(skill, relative_path)
        if skill.files is not None and skill.file(uri) is None:
            listed = ", ".join(clean(p) for p in (skill.paths or ())[:20])
            raise SkillError(f"{clean(relative_path or SKILL_FILE)[:200]} is not a file of "
                             f"skill {skill.name} of server '{safe_name(server)}' (its "
                             f"manifest lists: {listed}); nothing was read")
        spent = conn.skill_bytes.get(skill_uri, 0)
        if skill.files is None and spent >= MAX_SKILL_BYTES:
            raise SkillError(f"skill {skill.name} of server '{safe_name(server)}' has given "
                             f"{spent:,} bytes, the most a skill may; nothing more is read")
        try:
            result = await conn.request(lambda client: client.read_resource(uri))
        except Exception as exc:
            raise SkillError(f"server '{safe_name(server)}' could not read "
                             f"{clean(relative_path or SKILL_FILE)[:200]} of skill "
                             f"{skill.name}: {describe_error(exc)}") from None
        try:
            data = served_bytes(skill, uri, list(result.contents))
            check_file(skill, uri, data)
        except SkillRefused as refusal:
            conn.refused_skills[skill_uri] = (skill.digest_key, refusal.reason)
            raise
        conn.skill_bytes[skill_uri] = spent + len(data)
        return _text(data)

    def _skill(self, server: str, uri: str) -> tuple[ServerConnection, ServerSkill]:
        conn: ServerConnection | None = self.connections.get(server)
        if conn is None:
            raise SkillError(f"no server named '{safe_name(server)}'")
        skill = _listed(conn, uri)
        if skill is None:
            raise SkillError(f"server '{safe_name(server)}' lists no skill "
                             f"{clean(uri)[:200]}")
        return conn, skill


def _listed(conn: ServerConnection, uri: str) -> ServerSkill | None:
    return next((s for s in conn.skills.skills if s.uri == uri), None)


def _text(data: bytes) -> str:
    """A file's bytes as the model reads them: UTF-8 text, cleaned; a binary file
    described in one line."""
    try:
        return clean(data.decode("utf-8"))
    except UnicodeDecodeError:
        return f"[a binary file of {len(data):,} bytes]"
