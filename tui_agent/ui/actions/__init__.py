"""What each slash command does (the prompt, key bindings and the command palette all
end up here): :data:`HANDLERS` maps a command's name to its handler. The handlers live
by what they act on: :mod:`.screens`, the screens a command opens; :mod:`.conversation`,
the conversation and how the next turn goes; :mod:`.offered`, what the servers offer to
it (resources attached, prompts used). A command that another module owns (``/model``,
``/memory``, ``/rewind``, ...) is handed on to it from here, in one line."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui_agent.ui.actions import conversation, offered, screens
from tui_agent.ui.commands import Command

if TYPE_CHECKING:
    from tui_agent.ui.chat import ChatApp

Handler = Callable[["ChatApp", Command], Awaitable[None]]


async def run(app: ChatApp, command: Command) -> None:
    handler = HANDLERS.get(command.name)
    if handler is not None:
        await handler(app, command)


async def _mcp(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import mcp_add

    await mcp_add.command(app, command.arg)


async def _rewind(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import rewind

    await rewind.pick(app)


async def _mode(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import modes

    await modes.command(app, command.arg)


async def _model(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import model_actions  # off the way to the first frame

    await model_actions.model(app, command)


async def _think(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import model_actions

    await model_actions.think(app, command)


async def _memory(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.memory_actions import memory

    await memory(app, command)


async def _init(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.memory_actions import init

    await init(app, command)


async def _agents(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import agent_actions

    await agent_actions.listing(app)


async def _copy(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import composer

    await composer.copy_reply(app, command.arg)


async def _edit(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import composer

    await composer.edit_prompt(app)


async def _quit(app: ChatApp, command: Command) -> None:
    await app.action_quit()


HANDLERS: dict[str, Handler] = {
    "help": screens.help_screen, "model": _model, "think": _think,
    "servers": screens.servers, "tools": screens.tools, "new": conversation.new,
    "resume": conversation.resume, "rewind": _rewind, "add-dir": conversation.add_dir,
    "permissions": screens.permissions, "export": conversation.export,
    "clear": conversation.clear, "code": conversation.code, "theme": screens.theme,
    "attach": offered.attach, "quit": _quit, "prompt": offered.prompt,
    "compact": conversation.compact, "context": conversation.context,
    "image": conversation.image, "copy": _copy, "edit": _edit, "mcp": _mcp,
    "skills": conversation.skills, "memory": _memory, "init": _init, "mode": _mode,
    "agents": _agents,
}
