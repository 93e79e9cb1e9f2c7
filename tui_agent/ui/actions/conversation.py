"""The slash commands that act on the conversation and on how its next turn goes:
``/new``, ``/resume``, ``/add-dir``, ``/export``, ``/clear``, ``/code``, ``/compact``,
``/context``, ``/skills`` and ``/image``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.ui.commands import Command
from tui_agent.ui.widgets.history import context_report

if TYPE_CHECKING:
    from tui_agent.ui.chat import ChatApp


async def new(app: ChatApp, command: Command) -> None:
    app.action_stop()
    app.backend.new_conversation()
    app.images.clear()
    app.show_pending()
    await app.transcript.clear()
    # The meter goes with the old conversation: the next request counts the new one's.
    app.status.usage, app.status.context = app.backend.agent.usage, None
    app.show_price()
    await app.transcript.note("new conversation")
    app.hear_start()  # what its SessionStart hooks say, after the clear


async def resume(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import resume as resuming

    if command.arg and command.arg.strip().lower() not in resuming.EVERY:
        await app.resume(command.arg)
        return
    await resuming.pick(app, command.arg)


async def add_dir(app: ChatApp, command: Command) -> None:
    """``/add-dir DIR``: the folder joins the roots for this session (a clear line when it
    is missing or a file)."""
    from tui_agent.config import ConfigError
    from tui_agent.tools.text import clean

    if not command.arg:
        await app.transcript.note("/add-dir takes a folder: /add-dir DIR", "error")
        return
    try:
        added = await app.backend.add_dir(command.arg)
    except ConfigError as exc:
        await app.transcript.note(clean(str(exc)), "error")
        return
    from tui_agent.ui.startup import Startup

    if isinstance(app.start, Startup):  # a reload of the config keeps it
        app.start = replace(app.start, add_dirs=(*app.start.add_dirs, Path(added)))
    await app.transcript.note(f"added {clean(added)}: the tools may work in it for this "
                              "session")


async def export(app: ChatApp, command: Command) -> None:
    from tui_agent.core.export import save, to_markdown
    from tui_agent.core.session import load

    session = app.backend.agent.session
    if session is None:
        await app.transcript.note("nothing to export yet", "warning")
        return
    session.sync()
    target = Path(command.arg or f"tui-agent-{session.id}.md").expanduser()
    try:
        secrets = app.backend.settings.secrets
        save(target, to_markdown(load(session.path, secrets), secrets))
    except OSError as exc:
        await app.transcript.note(f"could not write {target}: {exc}", "error")
        return
    await app.transcript.note(f"exported to {target.resolve()}")


async def clear(app: ChatApp, command: Command) -> None:
    await app.transcript.clear()
    await app.transcript.note("screen cleared; the conversation goes on (/new starts afresh)")


async def code(app: ChatApp, command: Command) -> None:
    settings = app.options.settings.config.code_mode
    settings.enabled = not settings.enabled
    app.status.code_mode = settings.enabled
    await app.transcript.note(f"code mode {'on' if settings.enabled else 'off'} "
                              "(from the next turn)")


async def compact(app: ChatApp, command: Command) -> None:
    if app.turn_running():
        app.notify("a reply is still coming: esc stops it, then /compact", severity="warning")
        return
    if not app.backend.has_model():
        await app.transcript.note("no model yet: /model chooses one", "warning")
        return
    app.turns.compact(command.arg or None)


async def context(app: ChatApp, command: Command) -> None:
    """What the next request holds, part by part."""
    if not app.backend.has_model():
        await app.transcript.note("no model yet: /model chooses one", "warning")
        return
    agent = app.backend.agent
    size = await agent.compactor.now()
    app.status.context = size
    await agent.prompt.refresh()  # the memory as the next turn reads it
    await app.transcript.note(context_report(size, len(agent.request().tools),
                                             len(agent.messages) - agent.context.start,
                                             agent.context.start, await agent.prompt_sizes()))


async def skills(app: ChatApp, command: Command) -> None:
    """Every skill: origin, state this conversation, tokens; the ones not offered."""
    from tui_agent.core.skills.report import skills_report

    await app.backend.agent.skills.refresh()  # as the next turn will offer them
    await app.transcript.note("\n".join(skills_report(app.backend.agent.skills)))


async def image(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import composer

    if not command.arg and app.images:
        dropped = ", ".join(a.shown for a in app.images)
        app.images.clear()
        app.show_pending()
        await app.transcript.note(f"the next message goes without {dropped}")
        return
    if not command.arg:
        await app.transcript.note("/image PATH: an image file (PNG, JPEG, GIF, WebP); pasting "
                                  "its path into the prompt attaches it too (/image alone "
                                  "drops the images waiting)", "warning")
        return
    shown = command.arg.strip().strip("'\"")
    path = Path(shown).expanduser()
    await composer.attach_image(app, path if path.is_absolute() else Path.cwd() / path, shown)
