"""The skills on offer, from every origin, under the names the model uses.

An origin (:class:`SkillOrigin`) lists :class:`SkillEntry` items and reads a skill's
files when it is loaded: :class:`~tui_agent.core.skills.local.LocalSkills` over folders,
and (wired by whoever connects it) the MCP hub's server skills. The :class:`Catalog`
names each entry for the model: its bare name when no other origin has one of that name,
else qualified by its origin (``user:pdf``, ``project:pdf``, ``<server>:pdf``), so a
project's skill never silently stands in for the user's. It keeps what happened to each
(listed, loaded, refused and why) for ``/skills``, and the tools the user let loaded
skills run without asking (their ``allowed-tools``, once approved).
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

State = Literal["listed", "loaded", "refused"]


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """One skill as an origin lists it, before anything but its frontmatter is read."""

    name: str
    """The skill's own (bare) name."""
    description: str
    origin: Literal["user", "project", "server"]
    qualifier: str
    """What qualifies the name where another origin has the same one: ``user``,
    ``project``, or the server's name."""
    where: str
    """Where it is, for a person: the ``SKILL.md`` path, or ``server NAME``."""
    allowed_tools: tuple[str, ...] = ()
    asks: bool = False
    """Loading it always asks (a server's skill: its text comes from elsewhere)."""
    handle: Any = None
    """The origin's own key for it (a folder, a ``(server, uri)`` pair)."""


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """A loaded skill: the body of its ``SKILL.md`` and its other files' paths."""

    body: str
    files: tuple[str, ...] = ()
    more: int = 0
    """Files beyond those listed (a folder with very many)."""


class SkillRefused(Exception):
    """A skill (or one of its files) that is not given to the model; ``reason`` says why,
    naming the file. ``whole``: the skill itself is refused from now on (a server's answer
    did not match what it listed), not only this file."""

    def __init__(self, reason: str, *, whole: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.whole = whole


class SkillOrigin(Protocol):
    """Where skills come from: lists them, and reads them only when one is loaded."""

    def skills(self) -> Sequence[SkillEntry]: ...

    def notes(self) -> Sequence[str]:
        """What was wrong with the listing beyond what :attr:`Catalog.problems` holds (a
        server's skipped entries, a listing cut short), named."""
        ...

    def rescan(self) -> list[str] | None:
        """Look again where the skills come from (blocking: the catalog calls it in a
        thread); the origin's problems now when something changed, else None."""
        ...

    async def load(self, entry: SkillEntry) -> LoadedSkill:
        """The skill's body and file list; raises :class:`SkillRefused`."""
        ...

    async def read(self, entry: SkillEntry, file: str) -> str:
        """One of the skill's files by relative path; raises :class:`SkillRefused`."""
        ...


@dataclass
class SkillState:
    """What happened to a skill this session."""

    state: State = "listed"
    reason: str = ""
    tokens: int = 0
    """Of its body once loaded (estimated: a quarter of its characters)."""
    approved: Any = None
    """The entry's ``handle`` when it was loaded: a skill that asks asks again once its
    origin lists it otherwise (a server's changed digests)."""


def tokens_of(text: str) -> int:
    """A cheap estimate (about four characters a token) for what a person reads."""
    return (len(text) + 3) // 4


@dataclass
class Catalog:
    """Every origin's skills under unique names, and what happened to them."""

    origins: list[SkillOrigin] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Skills that were not offered (file:line: why), for the front ends to show."""
    states: dict[str, SkillState] = field(default_factory=dict)
    granted: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Skill name -> the ``allowed-tools`` the user approved with it (this session)."""

    def offered(self) -> dict[str, tuple[SkillOrigin, SkillEntry]]:
        """The skills by the name the model uses, in the origins' order."""
        listed = [(origin, entry) for origin in self.origins for entry in origin.skills()]
        counts: dict[str, int] = {}
        for _, entry in listed:
            counts[entry.name] = counts.get(entry.name, 0) + 1
        named: dict[str, tuple[SkillOrigin, SkillEntry]] = {}
        for origin, entry in listed:
            name = entry.name if counts[entry.name] == 1 else f"{entry.qualifier}:{entry.name}"
            named.setdefault(name, (origin, entry))
        return named

    def entries(self) -> dict[str, SkillEntry]:
        """The entries by the name the model uses."""
        return {name: entry for name, (_, entry) in self.offered().items()}

    def find(self, name: str) -> tuple[str, SkillOrigin, SkillEntry] | str:
        """The skill the model named, or why there is none (its ambiguous bare name
        lists the qualified ones)."""
        offered = self.offered()
        if name in offered:
            return (name, *offered[name])
        same = [n for n, (_, e) in offered.items() if e.name == name]
        if same:
            return f"'{name}' is the name of several skills; use one of: {', '.join(same)}"
        known = ", ".join(offered) or "none"
        return f"no skill named '{name[:100]}' (the skills are: {known})"

    async def refresh(self) -> list[str]:
        """Look again where the skills come from, off the event loop (a folder's skill
        added, edited or removed is offered as it is now); the problems that are new, to
        tell once."""
        found = await asyncio.to_thread(lambda: [o.rescan() for o in self.origins])
        if all(problems is None for problems in found):
            return []
        now = [p for problems in found if problems is not None for p in problems]
        new = [p for p in now if p not in self.problems]
        self.problems[:] = now
        return new

    def not_offered(self) -> list[str]:
        """Every skill that was not offered and why: the folders' broken ones, then what
        the origins say of their listings."""
        return [*self.problems, *(note for origin in self.origins for note in origin.notes())]

    def state(self, name: str) -> SkillState:
        return self.states.setdefault(name, SkillState())

    def grants(self, spec_name: str) -> str | None:
        """The loaded skill whose approved ``allowed-tools`` cover the tool the model
        calls ``spec_name``, or None. Entries with arguments (``Bash(git:*)``) are
        shown but never honoured here: the arguments could not be checked."""
        for skill, patterns in self.granted.items():
            if any("(" not in p and fnmatch.fnmatchcase(spec_name, p) for p in patterns):
                return skill
        return None
