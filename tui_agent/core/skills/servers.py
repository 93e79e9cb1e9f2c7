"""The origin of the skills MCP servers serve (SEP-2640): what the hub's servers listed
at connect (:meth:`~tui_agent.tools.hub.Hub.server_skills`), read from the skill's own
server only when the model loads it, each file verified by the hub against the listing.

A server's skill always asks before it loads (its text comes from elsewhere); the
approval holds for the session while the server lists the skill the same way (bound to
its ``digest_key``), and an "always allow" holds across sessions the same way
(:func:`~tui_agent.core.skills.tool.trust_of`): a changed skill asks again. A skill whose
server answered with something other than what it listed is refused, says why, and none
of its files is read again (the hub keeps that)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

from tui_agent.core.skills.catalog import Catalog, LoadedSkill, SkillEntry, SkillRefused
from tui_agent.custom.skill_files import without_frontmatter
from tui_agent.custom.skills import allowed_tools
from tui_agent.tools.skills import ServerSkill, SkillError
from tui_agent.tools.skills import SkillRefused as Mismatch


class SkillShelf(Protocol):
    """What of the hub this origin uses."""

    def server_skills(self) -> tuple[ServerSkill, ...]: ...

    def skill_notes(self) -> tuple[str, ...]: ...

    async def skill_files(self, server: str, uri: str) -> tuple[str, ...]: ...

    async def read_skill_file(self, server: str, skill_uri: str,
                              relative_path: str | None = None) -> str: ...


def tools_allowed(frontmatter: Any) -> tuple[str, ...]:
    """The server's frontmatter's ``allowed-tools`` (none where it is malformed: the
    entry's frontmatter was checked field by field against the file's already)."""
    found = frontmatter.get("allowed-tools", "") if hasattr(frontmatter, "get") else ""
    return allowed_tools(found) or ()


def entry_of(skill: ServerSkill) -> SkillEntry:
    return SkillEntry(skill.name, skill.description, "server", skill.server,
                      f"server {skill.server}", tools_allowed(skill.frontmatter), asks=True,
                      handle=(skill.server, skill.uri, skill.digest_key))


class ServerSkills:
    """The skills of every server the hub offers, as it lists them now (a server that
    connects later brings its skills; one that stops takes them away)."""

    def __init__(self, shelf: SkillShelf) -> None:
        self.shelf = shelf

    def skills(self) -> Sequence[SkillEntry]:
        return tuple(entry_of(skill) for skill in self.shelf.server_skills())

    def notes(self) -> Sequence[str]:
        return self.shelf.skill_notes()

    def rescan(self) -> list[str] | None:
        return None  # the hub's listing is read live

    async def load(self, entry: SkillEntry) -> LoadedSkill:
        server, uri, _ = entry.handle
        try:
            body = await self.shelf.read_skill_file(server, uri, None)
            files = await self.shelf.skill_files(server, uri)
        except Mismatch as exc:
            raise SkillRefused(exc.reason, whole=True) from None
        except SkillError as exc:
            raise SkillRefused(exc.reason) from None
        return LoadedSkill(without_frontmatter(body), files)

    async def read(self, entry: SkillEntry, file: str) -> str:
        server, uri, _ = entry.handle
        try:
            return await self.shelf.read_skill_file(server, uri, file)
        except Mismatch as exc:  # the skill is refused from now on, not just this file
            raise SkillRefused(exc.reason, whole=True) from None
        except SkillError as exc:
            raise SkillRefused(exc.reason) from None



def attach(catalog: Catalog, source: object) -> None:
    """Offer in ``catalog`` the skills of ``source``'s servers (when it is the hub: it has
    ``server_skills``), instead of those of a source it had before."""
    catalog.origins[:] = [o for o in catalog.origins if not isinstance(o, ServerSkills)]
    if callable(getattr(source, "server_skills", None)):
        catalog.origins.append(ServerSkills(cast(SkillShelf, source)))
