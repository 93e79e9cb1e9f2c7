"""The origin of the skills in the user's and the project's folders
(:mod:`tui_agent.custom.skills` found them; their files are read here, in a thread, when
the model loads one)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from tui_agent.core.skills.catalog import LoadedSkill, SkillEntry, SkillRefused
from tui_agent.custom import skill_files
from tui_agent.custom.folders import Stamp, stamp
from tui_agent.custom.skills import Discovered, Skill, discover


def entry_of(skill: Skill) -> SkillEntry:
    return SkillEntry(skill.name, skill.description,
                      "project" if skill.scope == "project" else "user", skill.scope,
                      str(skill.file), skill.allowed_tools, handle=skill.folder)


class LocalSkills:
    """Skills from folders on this machine: loading one reads only its folder. Made by
    :meth:`found_in` the folders, it reads them again (:meth:`rescan`) once something in
    them changed: a skill added or edited is offered from the next turn on."""

    def __init__(self, found: Discovered, dirs: Sequence[tuple[str, Path]] = (),
                 seen: Stamp = ()) -> None:
        self.dirs = tuple(dirs)
        """The folders, with their scopes (none: nothing is read again)."""
        self._seen = seen
        self._take(found)

    @classmethod
    def found_in(cls, dirs: Sequence[tuple[str, Path]]) -> LocalSkills:
        """The skills in ``dirs`` (blocking: reads each ``SKILL.md``'s frontmatter)."""
        seen = stamp(base for _, base in dirs)  # before reading: a change while reading
        return cls(discover(dirs), dirs, seen)  # is seen at the next look

    def _take(self, found: Discovered) -> None:
        self.found = found
        self._entries = tuple(entry_of(s) for s in found.skills)
        self.problems = [str(p) for p in found.problems]
        """The skills in the folders that are not offered, each with file, line and why."""

    def skills(self) -> Sequence[SkillEntry]:
        return self._entries

    def notes(self) -> Sequence[str]:
        return ()  # the broken ones are the catalog's problems, read with the folders

    def rescan(self) -> list[str] | None:
        """Read the folders again if anything in them changed since (blocking: stat calls,
        and the frontmatters when something did); the problems now, or None when nothing
        changed."""
        if not self.dirs:
            return None
        now = stamp(base for _, base in self.dirs)
        if now == self._seen:
            return None
        self._seen = now
        self._take(discover(self.dirs))
        return self.problems

    async def load(self, entry: SkillEntry) -> LoadedSkill:
        folder: Path = entry.handle

        def read() -> LoadedSkill:
            text = skill_files.body(folder)
            files, more = skill_files.listing(folder)
            return LoadedSkill(text, tuple(files), more)

        try:
            return await asyncio.to_thread(read)
        except (skill_files.SkillFileError, OSError) as exc:
            raise SkillRefused(str(exc)) from None

    async def read(self, entry: SkillEntry, file: str) -> str:
        try:
            return await asyncio.to_thread(skill_files.read, entry.handle, file)
        except (skill_files.SkillFileError, OSError) as exc:
            raise SkillRefused(str(exc)) from None
