"""The commands users wrote (command files; skills through the same registry) in the app:
read off the UI thread once the backend starts, offered in the ``/`` menu, ``/help`` and
the command palette beside the built-in commands and the servers' MCP prompts, and run as
the person's message (``/review 456``: the command's body, its ``@path`` s read as typed
ones are, its ``model`` for that turn only).

Files and servers wrote every word shown here: each is cleaned of control characters and
shown as plain text (the palette, which reads markup, gets it escaped).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tui_agent.tools.text import clean
from tui_agent.ui.widgets.prompt import PromptInput

if TYPE_CHECKING:
    from textual.app import SystemCommand

    from tui_agent.custom.commands import Expansion
    from tui_agent.ui.chat import ChatApp
    from tui_agent.ui.commands import MenuEntry


async def load(app: ChatApp) -> None:
    """Read the command files (a project's only once trusted: the backend's settings say
    so) and offer them; each that cannot be used is noted with its file and line."""
    from tui_agent.custom.registry import Registry
    from tui_agent.ui.commands import BY_NAME
    from tui_agent.wiring import user_commands

    told = {str(p) for p in app.user_commands.problems}  # said when last read
    try:
        app.user_commands = await asyncio.to_thread(
            user_commands.registry, app.backend.settings, BY_NAME)
    except OSError as exc:  # a folder that vanished mid-walk: the app goes on without them
        app.user_commands = Registry()
        await app.transcript.note(f"command files could not be read: {clean(str(exc))}",
                                  "warning")
    for problem in app.user_commands.problems:
        if str(problem) not in told:
            await app.transcript.note(f"command file not used: {clean(str(problem))}",
                                      "warning")
    offer(app)


async def refresh(app: ChatApp) -> None:
    """Read the command files (and skills) again if something in their folders changed
    since: a file added or edited while the app runs is a command from the next ``/`` on
    (stat calls only when nothing changed, off the UI thread)."""
    if await asyncio.to_thread(app.user_commands.stale):
        await load(app)


def offer(app: ChatApp) -> None:
    """What the ``/`` menu and tab offer: the built-in commands, the commands from files,
    then the servers' prompts."""
    app.chat.query_one(PromptInput).offered = entries(app)


def entries(app: ChatApp) -> list[MenuEntry]:
    from tui_agent.ui.commands import MenuEntry, built_in_entries

    found = built_in_entries()
    for command in app.user_commands.listed():
        found.append(MenuEntry(command.name, clean(command.argument_hint),
                               clean(command.description), clean(command.label)))
    for ref, description in app.prompt_list:
        found.append(MenuEntry("".join(clean(ref).split()), "key=value ...",
                               clean(description), "MCP"))
    return found


def help_rows(app: ChatApp) -> tuple[list[tuple[str, str]], list[str]]:
    """``/help``'s rows for the commands from files (``/name hint``, what it does and
    where from), and the files that could not be used."""
    rows = [(clean(f"/{c.name} {c.argument_hint}".strip()),
             clean(f"{c.description} ({c.label})".strip()))
            for c in app.user_commands.listed()]
    return rows, [clean(str(p)) for p in app.user_commands.problems]


async def run(app: ChatApp, name: str, expansion: Expansion, typed: str) -> None:
    """Send the command's body as the person's message; ``typed`` goes back into the
    prompt when it cannot go (a turn running, a model that cannot be used)."""
    from tui_agent.config import ConfigError
    from tui_agent.ui import composer
    from tui_agent.wiring.user_commands import unrun_note

    await app.loaded.wait()
    if await app.turns.refused(typed):
        return
    if expansion.model:
        try:
            app.backend.settings.check(expansion.model)
        except ConfigError as exc:
            await app.transcript.note(f"/{name} asks for the model {expansion.model}: "
                                      f"{clean(str(exc))}; nothing was sent", "error")
            return
    note = unrun_note(name, expansion)
    if note:
        await app.transcript.note(clean(note), "warning")
    files = await composer.outgoing(app, expansion.text)
    if files is not None:
        await app.turns.send(files.text, files, model=expansion.model)


def palette(app: ChatApp) -> Iterable[SystemCommand]:
    """The commands from files in the command palette: one that takes no arguments
    runs; another is written into the prompt, for its arguments to follow."""
    from textual.app import SystemCommand
    from textual.markup import escape

    from tui_agent.custom.commands import PLACEHOLDER
    from tui_agent.wiring.user_commands import run as expanded

    for command in app.user_commands.listed():
        takes = bool(command.argument_hint or PLACEHOLDER.search(command.body))

        async def callback(name: str = command.name, takes: bool = takes) -> None:
            prompt = app.chat.query_one(PromptInput)
            if takes:
                prompt.load_text(f"/{name} ")
                prompt.move_cursor(prompt.document.end)
                prompt.focus()
                return
            found = expanded(app.user_commands, f"/{name}")
            if found is not None:
                await run(app, *found, typed="")

        about = clean(command.description).splitlines()[0] if command.description else ""
        yield SystemCommand(escape(f"/{clean(command.name)}"),
                            escape(f"{about} ({clean(command.label)})".strip()), callback)
