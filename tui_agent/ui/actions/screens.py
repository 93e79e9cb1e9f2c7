"""The slash commands that open a screen: ``/help``, ``/servers``, ``/tools``,
``/permissions`` and ``/theme`` (which sets the theme at once when it is named)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.ui.commands import Command

if TYPE_CHECKING:
    from tui_agent.ui.chat import ChatApp


async def help_screen(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.help import HelpScreen
    from tui_agent.ui.user_commands import help_rows

    await app.push_screen(HelpScreen(app.prompt_list, *help_rows(app)))


async def servers(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.servers import ServerControls, ServersScreen

    backend = app.backend

    async def add(words: str) -> tuple[bool, str]:
        from tui_agent.ui import mcp_add

        return await mcp_add.add(app, words)

    await app.push_screen(ServersScreen(ServerControls(
        backend.statuses, backend.tools_of, backend.policy, backend.reconnect,
        backend.enable, backend.disable, backend.stats, backend.login, backend.login_status,
        backend.login_outcome, add)))


async def tools(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.tools import ToolsScreen

    backend = app.backend
    listed = [(s.name, [spec.tool for spec in backend.tools_of(s.name)])
              for s in backend.statuses()]
    await app.push_screen(ToolsScreen(backend.policy, backend.options.tool_filter, listed))


async def permissions(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.permissions import PermissionsScreen

    await app.push_screen(PermissionsScreen(app.backend.policy))


async def theme(app: ChatApp, command: Command) -> None:
    def chosen(name: str | None) -> None:
        if name:
            app.theme = name

    if command.arg:
        if command.arg not in app.available_themes:
            await app.transcript.note(f"no theme named '{command.arg}'", "error")
            return
        chosen(command.arg)
        return
    from tui_agent.ui.screens.picker import Picker

    names = sorted(app.available_themes, key=lambda n: (not n.startswith("tui-agent"), n))
    await app.push_screen(Picker("Theme", [(n, n) for n in names], current=app.theme),
                          chosen)
