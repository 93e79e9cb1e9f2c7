"""The slash commands an editor offers (``available_commands_update``) and what each does
when a prompt starts with one: ``/compact``, ``/context``, ``/code on|off``, ``/model
[NAME]``, ``/rewind [N] [files]`` (:mod:`tui_agent.acp.rewind`), and each server's MCP
prompt (``/server:prompt KEY=VALUE ...``), which puts the
prompt's messages into the conversation and runs the turn they start (with the files and
images the editor sent beside the command; a built-in command refuses those). The
commands from files (the user's, a trusted project's: ``/review 456``) are offered after
them; one sends its expanded body as the person's message (:func:`user_command`).

A command's answer is text of the reply; what the editor knows as state (the mode) is
also sent as its own update.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import Any

from acp.helpers import update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    TextContentBlock,
    UnstructuredCommandInput,
)

from tui_agent.acp.chunks import own_text
from tui_agent.acp.sessions import AcpSession
from tui_agent.config.interpolate import mask
from tui_agent.core.attachments import Prepared, content
from tui_agent.core.events import Compacted, ErrorOccurred, EventMasker, Notice
from tui_agent.custom.commands import Expansion
from tui_agent.tools.text import clean

Send = Callable[[Any], Awaitable[None]]
BUILT_IN = {
    "compact": ("summarize the older messages for the model (every message stays saved)", None),
    "context": ("how much of the model's context window the conversation takes", None),
    "code": ("switch code mode on or off (the model writes one script over the tools)",
             "on | off"),
    "model": ("use another model from the next turn on (no name: list them)", "model name"),
    "rewind": ("go back to before your N-th last message (default 1), the conversation "
               "kept; files: restore the files the built-in tools changed since too",
               "[N] [files]"),
    "init": ("have the model draft the project's AGENTS.md; written only once you allow "
             "its diff", None),
    "trust": ("trust this project's files (memory, commands, servers): shows what they ask "
              "for first", None),
}


def _command(name: str, description: str, hint: str | None) -> AvailableCommand:
    shown = AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=shown)


def available(session: AcpSession) -> Any:
    """The ``available_commands_update`` for ``session``: the built-in commands, the
    commands from files, then the servers' prompts listed so far. (Files' and servers'
    words are cleaned: an editor shows them as they are.)"""
    commands = [_command(name, what, hint) for name, (what, hint) in BUILT_IN.items()]
    commands += [_command(c.name, clean(f"{c.description} ({c.label})".strip())[:200],
                          clean(c.argument_hint) or None)
                 for c in session.commands.listed()]
    commands += [_command(ref, (what or f"the MCP prompt {ref}")[:200], "KEY=VALUE ...")
                 for ref, what in session.prompts]
    return update_available_commands(commands)


def user_command(session: AcpSession, text: str) -> tuple[str, Expansion] | None:
    """``(name, what it sends)`` when ``text`` runs a command from a file; else None."""
    from tui_agent.wiring import user_commands

    return user_commands.run(session.commands, text)


async def run(session: AcpSession, text: str, send: Send) -> str | None:
    """Do the command ``text`` names; the text of a turn to run after it (an MCP prompt's),
    else None. A prompt that names no command is returned as it is."""
    name, _, rest = text.strip()[1:].partition(" ")
    rest = rest.strip()
    if name == "compact":
        await _compact(session, send)
    elif name == "context":
        await send(_said(session, await _context(session)))
    elif name == "code":
        await send(_said(session, code_switch(session, rest)))
    elif name == "model":
        await send(_said(session, _model(session, rest)))
    elif name == "rewind":
        from tui_agent.acp import rewind

        await send(_said(session, await rewind.run(session, rest)))
    elif any(ref == name for ref, _ in session.prompts):
        return await _mcp_prompt(session, name, rest)
    else:
        return text
    return None


async def run_user_command(
        session: AcpSession, blocks: list[Any], user: tuple[str, Expansion], send: Send,
        prepare: Callable[[list[Any]], Awaitable[Prepared]],
        run_turn: Callable[[str | list[dict[str, Any]]], Awaitable[str]]) -> str:
    """A command from a file: its expanded body is the person's message, read as their
    typed words are (``@path``: ``prepare``), with the blocks sent beside it; its
    ``model`` serves this turn only. The turn's stop reason."""
    from tui_agent.config import ConfigError
    from tui_agent.wiring import user_commands

    name, expansion = user
    note = user_commands.unrun_note(name, expansion)
    if note:
        await send(_said(session, note + "\n\n"))
    others = [b for b in blocks if getattr(b, "type", "") != "text"]
    said = TextContentBlock(type="text", text=expansion.text)
    message = content(await prepare([said, *others]))
    if not expansion.model:
        return await run_turn(message)
    try:
        llm = session.models.make(expansion.model)
    except ConfigError as exc:
        raise ValueError(f"/{name} asks for the model {expansion.model}: {exc}") from None
    was, session.agent.llm = session.agent.llm, llm
    try:
        return await run_turn(message)
    finally:
        session.agent.llm = was


def _said(session: AcpSession, text: str) -> Any:
    """A command's answer as text of the reply: it may quote the person's words or a
    config error, so it is masked and cleaned as the turn's text is."""
    return own_text(clean(mask(text, session.settings.secrets)), "command")


def is_command(session: AcpSession, text: str) -> bool:
    name = _name(text)
    return name in BUILT_IN or any(ref == name for ref, _ in session.prompts)


def starts_a_turn(session: AcpSession, text: str) -> bool:
    """The command is a server's MCP prompt: its messages start a turn (which takes the
    files and images sent with it), where a built-in command only answers."""
    return any(ref == _name(text) for ref, _ in session.prompts)


def _name(text: str) -> str:
    return text.strip()[1:].partition(" ")[0] if text.strip().startswith("/") else ""


async def _compact(session: AcpSession, send: Send) -> None:
    """The summary's outcome as text of the reply, masked and cleaned as a turn's events
    are (a provider's error may echo the request, key included)."""
    masker = EventMasker(session.settings.secrets)
    async with aclosing(session.agent.compactor.manual()) as events:
        async for event in events:
            for shown in masker(event):
                if isinstance(shown, Compacted):
                    await send(own_text(clean(shown.describe()), "command"))
                elif isinstance(shown, ErrorOccurred):
                    await send(own_text(f"⚠ {clean(shown.message)}", "error"))
                elif isinstance(shown, Notice):
                    await send(own_text(clean(shown.message), "command"))


async def _context(session: AcpSession) -> str:
    await session.agent.prompt.refresh()
    parts = ", ".join(f"{name} {tokens:,}" for name, tokens in
                      await session.agent.prompt_sizes())
    prompt = f"System prompt parts: {parts or 'none'}."
    size = session.last_context
    if size is None:
        return f"No request has been measured yet in this session. {prompt}"
    window = f" of {size.window:,}" if size.window else ""
    return (f"{size.tokens:,}{window} tokens: system {size.system:,}, tools {size.tools:,}, "
            f"summary {size.summary:,}, messages {size.messages:,}, results {size.results:,}. "
            f"{prompt}")


def code_switch(session: AcpSession, word: str) -> str:
    if word not in ("on", "off", ""):
        return f"/code takes on or off, not {word!r}"
    on = not session.code_mode if word == "" else word == "on"
    session.set_code_mode(on)
    return f"Code mode is {'on' if on else 'off'} from the next request."


def _model(session: AcpSession, name: str) -> str:
    from tui_agent.acp.options import switch_model

    if not name:
        current = session.agent.llm.model
        return "Models: " + ", ".join(f"{m}{' (in use)' if m == current else ''}"
                                      for m in session.models.choices())
    problem = switch_model(session, name)
    return f"⚠ {problem}" if problem else f"Using {name} from the next turn on."


async def _mcp_prompt(session: AcpSession, ref: str, rest: str) -> str:
    from tui_agent.wiring import mcp_context

    server, name = mcp_context.split_ref(ref, "prompt")
    arguments = mcp_context.prompt_arguments(rest.split()) if rest else {}
    earlier, text = await mcp_context.prompt_turn(session.hub, server, name, arguments)
    session.agent.add_messages(earlier)
    return text


def is_init(text: str) -> bool:
    """Whether the prompt is ``/init`` (words after it are ignored, as in the app)."""
    return _name(text) == "init"


def is_trust(text: str) -> bool:
    """Whether the prompt is ``/trust`` (:mod:`tui_agent.acp.trust`)."""
    return _name(text) == "trust"


async def init(session: AcpSession, send: Send,
               run_turn: Callable[[str], Awaitable[str]]) -> str:
    """``/init``: the app's turn with the fixed instruction (``run_turn``), then the
    draft's write asked with ``session/request_permission`` (the session's gate, the diff
    in the question), then an agent message saying whether it was written. The stop
    reason of the turn."""
    from tui_agent.core.prompt import init as drafting

    reader = session.agent.prompt.memory_reader
    where = reader.where if reader is not None else None
    path = drafting.target(where) if where is not None else None
    if where is None or path is None:
        await send(_said(session, drafting.NO_PROJECT))
        return "end_turn"
    reason = await run_turn(drafting.instruction(path))
    if reason != "end_turn":
        await send(_said(session, f"\n\n/init: the turn did not end: {path} not written"))
        return reason
    done = await drafting.settle(session.agent.gate, where, path,
                                 drafting.last_reply(session.agent.messages))
    await send(_said(session, f"\n\n{done.message}"))
    return "end_turn"
