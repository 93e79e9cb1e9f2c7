"""The ``/name`` commands a front end offers besides its built-in ones, from every
provider: command files (:mod:`tui_agent.custom.commands`) today, skills next.

A provider is a :class:`CommandSource`: anything with ``commands()`` returning
:class:`~tui_agent.custom.commands.UserCommand` s. Skills plug in as one more source
whose commands carry the skill's body (``origin="skill"``), so ``/skill-name args``
expands ``$ARGUMENTS`` exactly as a command file does. :func:`gather` merges the sources
in the order given (the first to offer a name keeps it) under the front end's built-in
names, which always win. A name that loses is never dropped silently: it becomes a
:class:`~tui_agent.custom.commands.CommandProblem` naming its file and the winner. A
project's command never replaces a user's (the user's files are the user's own words;
the project's are someone else's).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tui_agent.custom.commands import CommandProblem, UserCommand
from tui_agent.custom.folders import Stamp, stamp


class CommandSource(Protocol):
    """A provider of commands (command files, skills, ...)."""

    def commands(self) -> Sequence[UserCommand]: ...


@dataclass(frozen=True)
class Registry:
    """The commands offered, by name, and the ones that could not be."""

    by_name: dict[str, UserCommand] = field(default_factory=dict)
    problems: tuple[CommandProblem, ...] = ()
    watched: tuple[Path, ...] = ()
    """The folders the commands were read from."""
    seen: Stamp = ()
    """Their :func:`~tui_agent.custom.folders.stamp` just before they were read."""

    def stale(self) -> bool:
        """Whether something in :attr:`watched` changed since (blocking: stat calls)."""
        return bool(self.watched) and stamp(self.watched) != self.seen

    def find(self, name: str) -> UserCommand | None:
        """The command ``name`` names (as written, else in lower case)."""
        return self.by_name.get(name) or self.by_name.get(name.lower())

    def listed(self) -> list[UserCommand]:
        """Every command, by name."""
        return [self.by_name[n] for n in sorted(self.by_name, key=str.lower)]


def gather(sources: Sequence[CommandSource], built_in: Collection[str],
           problems: Sequence[CommandProblem] = ()) -> Registry:
    """The commands of ``sources`` that a built-in command (``built_in``, compared in
    lower case) or an earlier source does not already take; ``problems``: the sources'
    own, kept first."""
    reserved = {n.lower() for n in built_in}
    chosen: dict[str, UserCommand] = {}
    lost: list[CommandProblem] = list(problems)
    for source in sources:
        for command in source.commands():
            key = command.name.lower()
            if key in reserved:
                lost.append(_problem(command, f"/{command.name} is a built-in command, "
                                     "which always wins: rename the file to use it"))
            elif key in chosen:
                winner = chosen[key]
                lost.append(_problem(command, f"/{command.name} is not used: the "
                                     f"{winner.origin}'s {_where(winner)} has that name "
                                     "(rename one of them to have both)"))
            else:
                chosen[key] = command
    return Registry(chosen, tuple(lost))


def _where(command: UserCommand) -> str:
    return str(command.file) if command.file is not None else f"/{command.name}"


def _problem(command: UserCommand, message: str) -> CommandProblem:
    return CommandProblem(command.file or Path(command.origin), 1 if command.file else 0,
                          message)
