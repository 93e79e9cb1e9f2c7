"""What a person brings from MCP servers into a conversation, the same way in the app and
headless: a resource attached to the next message (``/attach``, ``run --attach
SERVER:URI``) and a server's prompt (``/SERVER:PROMPT``, ``run --mcp-prompt SERVER:PROMPT
key=value ...``), whose messages keep their roles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.tools.hub import Hub
    from tui_agent.tools.prompts import PromptInfo

TEMPLATE = "template:"
"""What marks a resource template among :func:`resource_list`'s."""
CONTINUE = "Go on from the prompt above."
"""The turn's text when a prompt ends with the assistant's message and nothing was added."""


def split_ref(ref: str, what: str) -> tuple[str, str]:
    """``SERVER:REST`` of a reference; ValueError naming the form when it is not one."""
    server, sep, rest = ref.partition(":")
    if not sep or not server or not rest:
        form = "SERVER:URI" if what == "resource" else "SERVER:PROMPT"
        raise ValueError(f"{what} {ref!r} is not {form}")
    return server, rest


async def attachment(hub: Hub | None, ref: str) -> str:
    """A resource (``server:uri``) as a block to put before the next message. Raises
    ``ValueError`` or ``ServerError`` naming what was wrong."""
    if hub is None:
        raise ValueError("no MCP servers are configured")
    server, uri = split_ref(ref, "resource")
    text = await hub.read_resource(server, uri)
    return f'<resource server="{server}" uri="{uri}">\n{text}\n</resource>'


async def prompt_turn(hub: Hub | None, server: str, name: str, arguments: dict[str, str],
                      added: str | None = None) -> tuple[list[tuple[str, str]], str]:
    """A server's prompt as ``(earlier messages, the turn's text)``: the messages keep
    their roles; the last one, if the user's and nothing is ``added``, is the turn's text.
    Raises ``ValueError`` or ``ServerError``; :class:`MissingArguments` (a ``ValueError``)
    when the prompt's definition requires an argument not given, before asking for it."""
    from tui_agent.tools.prompts import find_prompt

    if hub is None:
        raise ValueError("no MCP servers are configured")
    definition = await find_prompt(hub, server, name)
    return await defined_prompt_turn(hub, server, name, definition, arguments, added)


async def defined_prompt_turn(hub: Hub | None, server: str, name: str,
                              definition: PromptInfo | None, arguments: dict[str, str],
                              added: str | None = None) -> tuple[list[tuple[str, str]], str]:
    """:func:`prompt_turn` with the prompt's ``definition`` already looked up (None: its
    server does not list it), so that one use of a prompt lists the prompts once."""
    from tui_agent.tools.prompts import MissingArguments, missing_arguments

    if hub is None:
        raise ValueError("no MCP servers are configured")
    lacking = missing_arguments(definition, arguments) if definition else ()
    if definition is not None and lacking:
        raise MissingArguments(definition, lacking)
    messages = await hub.get_prompt(server, name, arguments)
    if not messages:
        raise ValueError(f"prompt {server}:{name} has no messages")
    if added is None and messages[-1][0] == "user":
        return messages[:-1], messages[-1][1]
    return messages, added if added is not None else CONTINUE


def prompt_arguments(pairs: Sequence[str]) -> dict[str, str]:
    """``key=value`` words as a dict; ValueError naming the first that is not one."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"prompt argument {pair!r} is not key=value")
        out[key] = value
    return out


async def prompt_list(hub: Hub | None) -> list[tuple[str, str]]:
    """``(server:prompt, description)`` of every prompt the servers offer."""
    if hub is None:
        return []
    out = []
    for listing in await hub.prompts():
        for prompt in listing.items:
            out.append((f"{listing.server}:{prompt.name}", prompt.description or ""))
    return out


async def resource_list(hub: Hub | None) -> list[tuple[str, str]]:
    """``(server:uri, label)`` of every resource the servers list, then
    ``(TEMPLATE + server:template, label)`` of every resource template."""
    if hub is None:
        return []
    out = []
    for listing in await hub.resources():
        for res in listing.items:
            label = f"{listing.server}: {res.name or res.uri} ({res.uri})"
            out.append((f"{listing.server}:{res.uri}", label))
    for listing in await hub.resource_templates():
        for tpl in listing.items:
            label = f"{listing.server}: {tpl.name} (template {tpl.uri_template})"
            out.append((f"{TEMPLATE}{listing.server}:{tpl.uri_template}", label))
    return out
