"""Skills as ``/name`` commands (Agent Skills a user invokes by name, as in Claude Code):
each skill found in the user's (and a trusted project's) folders offered through the
command registry's :class:`~tui_agent.custom.registry.CommandSource` seam. Running
``/name args`` sends the skill's ``SKILL.md`` body as the person's message, its
``$ARGUMENTS`` and ``$1``... filled as a command file's are. A skill whose body cannot be
read is reported (file and why), not offered."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_agent.custom import skill_files
from tui_agent.custom.commands import CommandProblem, UserCommand
from tui_agent.custom.skills import SKILL_FILE, Discovered


@dataclass
class SkillCommands:
    """The skills of ``found`` as commands; ``problems``: the ones that could not be."""

    found: Discovered
    problems: list[CommandProblem] = field(default_factory=list)

    def commands(self) -> Sequence[UserCommand]:
        made: list[UserCommand] = []
        self.problems.clear()
        for skill in self.found.skills:
            file = skill.folder / SKILL_FILE
            try:
                body = skill_files.body(skill.folder)
            except (skill_files.SkillFileError, OSError) as exc:
                self.problems.append(CommandProblem(file, 1, f"the skill is not offered as "
                                                             f"/{skill.name}: {exc}"))
                continue
            made.append(UserCommand(skill.name, skill.description, body, "skill",
                                    f"skill, {skill.scope}", file=file))
        return made
