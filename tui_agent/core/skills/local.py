"""The origin of the skills in the user's and the project's folders
(:mod:`tui_agent.custom.skills` found them; their files are read here, in a thread, when
the model loads one)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from tui_agent.core.skills.catalog import LoadedSkill, SkillEntry, SkillRefused
from tui_agent.custom import skill_files
from tui_agent.custom.skills import Discovered, Skill


def entry_of(skill: Skill) -> SkillEntry:
    return SkillEntry(skill.name, skill.description,
                      "project" if skill.scope == "project" else "user", skill.scope,
                      str(skill.file), skill.allowed_tools, handle=skill.folder)


class LocalSkills:
    """Skills from folders on this machine: loading one reads only its folder."""

    def __init__(self, found: Discovered) -> None:
        self.found = found
        self._entries = tuple(entry_of(s) for s in found.skills)

    def skills(self) -> Sequence[SkillEntry]:
        return self._entries

    def notes(self) -> Sequence[str]:
        return ()  # the broken ones are the catalog's problems, read with the folders

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
