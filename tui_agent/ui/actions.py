"""What each slash command does (the prompt, key bindings and the command palette all
end up here)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.ui.commands import Command
from tui_agent.ui.widgets.history import context_report

if TYPE_CHECKING:
    from tui_agent.tools.completion import Completing
    from tui_agent.tools.elicit import Answer
    from tui_agent.tools.prompts import PromptInfo
    from tui_agent.ui.chat import ChatApp
    from tui_agent.ui.widgets.suggest import Complete

Handler = Callable[["ChatApp", Command], Awaitable[None]]


async def run(app: ChatApp, command: Command) -> None:
    handler = HANDLERS.get(command.name)
    if handler is not None:
        await handler(app, command)


async def _help(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.help import HelpScreen
    from tui_agent.ui.user_commands import help_rows

    await app.push_screen(HelpScreen(app.prompt_list, *help_rows(app)))


async def _servers(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.servers import ServerControls, ServersScreen

    backend = app.backend

    async def add(words: str) -> tuple[bool, str]:
        from tui_agent.ui import mcp_add

        return await mcp_add.add(app, words)

    await app.push_screen(ServersScreen(ServerControls(
        backend.statuses, backend.tools_of, backend.policy, backend.reconnect,
        backend.enable, backend.disable, backend.stats, backend.login, backend.login_status,
        backend.login_outcome, add)))


async def _mcp(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import mcp_add

    await mcp_add.command(app, command.arg)


async def _tools(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.tools import ToolsScreen

    backend = app.backend
    servers = [(s.name, [spec.tool for spec in backend.tools_of(s.name)])
               for s in backend.statuses()]
    await app.push_screen(ToolsScreen(backend.policy, backend.options.tool_filter, servers))


async def _permissions(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.screens.permissions import PermissionsScreen

    await app.push_screen(PermissionsScreen(app.backend.policy))


async def _new(app: ChatApp, command: Command) -> None:
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


async def _resume(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import resume

    if command.arg and command.arg.strip().lower() not in resume.EVERY:
        await app.resume(command.arg)
        return
    await resume.pick(app, command.arg)


async def _add_dir(app: ChatApp, command: Command) -> None:
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


async def _rewind(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import rewind

    await rewind.pick(app)


async def _export(app: ChatApp, command: Command) -> None:
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


async def _clear(app: ChatApp, command: Command) -> None:
    await app.transcript.clear()
    await app.transcript.note("screen cleared; the conversation goes on (/new starts afresh)")


async def _code(app: ChatApp, command: Command) -> None:
    code = app.options.settings.config.code_mode
    code.enabled = not code.enabled
    app.status.code_mode = code.enabled
    await app.transcript.note(f"code mode {'on' if code.enabled else 'off'} "
                              "(from the next turn)")


async def _mode(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import modes

    await modes.command(app, command.arg)


async def _theme(app: ChatApp, command: Command) -> None:
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


async def _attach(app: ChatApp, command: Command) -> None:
    from tui_agent.wiring.mcp_context import TEMPLATE

    async def chosen(ref: str | None) -> None:
        if ref and ref.startswith(TEMPLATE):
            await _fill(app, ref.removeprefix(TEMPLATE), chosen)
        elif ref:
            app.attachments.append(ref)
            app.show_pending()
            watched = await app.backend.watch(ref)
            await app.transcript.note(f"attached {ref} to the next message" + (
                "; when it changes, the new content goes with the message after" if watched
                else ""))

    if command.arg:
        await chosen(command.arg)
        return
    from tui_agent.ui.screens.picker import Picker

    resources = await app.backend.resources()
    if not resources:
        await app.transcript.note("no MCP server lists any resources", "warning")
        return
    await app.push_screen(Picker("Attach a resource to the next message", resources),
                          chosen)


async def _fill(app: ChatApp, ref: str, chosen: Callable[[str | None], Awaitable[None]]
                ) -> None:
    """A resource template chosen in /attach: its variables filled in, with the server's
    suggestions, then the resource attached."""
    from tui_agent.tools.completion import Completing
    from tui_agent.ui.screens.template import TemplateForm

    server, _, template = ref.partition(":")

    async def filled(uri: str | None) -> None:
        await chosen(f"{server}:{uri}" if uri else None)

    await app.push_screen(TemplateForm(server, template, _completer(
        app, server, Completing("resource", template))), filled)


def _completer(app: ChatApp, server: str, target: Completing) -> Complete:
    """What ``server`` suggests for the arguments of ``target``, as a form asks for it."""
    return lambda name, value, context: app.backend.complete(server, target, name, value,
                                                             context)


async def _compact(app: ChatApp, command: Command) -> None:
    if app.turn_running():
        app.notify("a reply is still coming: esc stops it, then /compact", severity="warning")
        return
    if not app.backend.has_model():
        await app.transcript.note("no model yet: /model chooses one", "warning")
        return
    app.turns.compact(command.arg or None)


async def _context(app: ChatApp, command: Command) -> None:
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


async def _memory(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.memory_actions import memory

    await memory(app, command)


async def _init(app: ChatApp, command: Command) -> None:
    from tui_agent.ui.memory_actions import init

    await init(app, command)


async def _image(app: ChatApp, command: Command) -> None:
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


async def _copy(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import composer

    await composer.copy_reply(app, command.arg)


async def _edit(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import composer

    await composer.edit_prompt(app)


async def _quit(app: ChatApp, command: Command) -> None:
    await app.action_quit()


async def _prompt(app: ChatApp, command: Command) -> None:
    """A server's prompt into the conversation. Its arguments are asked for in a form when
    a required one is missing, or (from the palette, ``ask``) when it takes any. Its
    definition is listed once, here, for the form and the check both."""
    from tui_agent.tools.prompts import find_prompt

    found = await find_prompt(app.backend.hub, command.server, command.prompt)
    await _use_prompt(app, command, found)


async def _use_prompt(app: ChatApp, command: Command, found: PromptInfo | None) -> None:
    from tui_agent.tools.errors import ServerError
    from tui_agent.tools.prompts import missing_arguments

    if found is not None and (missing_arguments(found, command.arguments)
                              or command.ask and found.arguments):
        await _prompt_form(app, command, found)
        return
    try:
        text = await app.backend.prompt_turn(command.server, command.prompt, found,
                                             command.arguments)
    except (ServerError, ValueError) as exc:
        await app.transcript.note(f"/{command.server}:{command.prompt}: {exc}", "error")
        return
    await app.send(text)


async def _prompt_form(app: ChatApp, command: Command, found: PromptInfo) -> None:
    """The form for ``found``'s arguments; what it holds when sent is what goes: an
    argument cleared there is not sent (a required one cannot be cleared: the form
    refuses, and were it sent empty it would be asked for again)."""
    from tui_agent.tools.completion import Completing
    from tui_agent.ui.screens.prompt_args import PromptArguments

    async def filled(answer: Answer | None) -> None:
        if answer is not None and answer.action == "accept":
            asked = {a.name for a in found.arguments}
            kept = {k: v for k, v in command.arguments.items() if k not in asked}
            given = {k: str(v) for k, v in answer.content.items() if str(v)}
            await _use_prompt(app, replace(command, arguments=kept | given, ask=False), found)

    await app.push_screen(PromptArguments(found, command.arguments, _completer(
        app, command.server, Completing("prompt", command.prompt))), filled)


async def _model(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import model_actions  # off the way to the first frame

    await model_actions.model(app, command)


async def _skills(app: ChatApp, command: Command) -> None:
    """Every skill: origin, state this conversation, tokens; the ones not offered."""
    from tui_agent.core.skills.report import skills_report

    await app.backend.agent.skills.refresh()  # as the next turn will offer them
    await app.transcript.note("\n".join(skills_report(app.backend.agent.skills)))


async def _think(app: ChatApp, command: Command) -> None:
    from tui_agent.ui import model_actions

    await model_actions.think(app, command)


HANDLERS: dict[str, Handler] = {
    "help": _help, "model": _model, "think": _think,
    "servers": _servers, "tools": _tools, "new": _new, "resume": _resume,
    "rewind": _rewind, "add-dir": _add_dir, "permissions": _permissions,
    "export": _export, "clear": _clear, "code": _code, "theme": _theme, "attach": _attach,
    "quit": _quit, "prompt": _prompt, "compact": _compact, "context": _context,
    "image": _image, "copy": _copy, "edit": _edit, "mcp": _mcp, "skills": _skills,
    "memory": _memory, "init": _init, "mode": _mode,
}
