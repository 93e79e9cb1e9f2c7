"""The slash commands that bring what a server offers into the conversation: ``/attach``
(a resource, or a resource template filled in a form, with the server's suggestions) and
a server's prompt (``/SERVER:PROMPT``, its arguments asked for in a form when needed)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tui_agent.ui.commands import Command

if TYPE_CHECKING:
    from tui_agent.tools.completion import Completing
    from tui_agent.tools.elicit import Answer
    from tui_agent.tools.prompts import PromptInfo
    from tui_agent.ui.chat import ChatApp
    from tui_agent.ui.widgets.suggest import Complete


async def attach(app: ChatApp, command: Command) -> None:
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


async def prompt(app: ChatApp, command: Command) -> None:
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
