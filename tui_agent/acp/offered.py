"""What an editor is told when a session opens, after the response that names it (a
client drops updates of a session it does not know yet): what the project holds back
until trusted (:mod:`.trust`), what the session's SessionStart hooks said, then the
commands, at once (with the command files, read first) and again once the servers have
listed their prompts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from tui_agent.acp import commands, trust
from tui_agent.acp.chunks import own_text
from tui_agent.acp.sessions import AcpSession
from tui_agent.core.events import Event, EventMasker, Notice
from tui_agent.tools.text import clean
from tui_agent.wiring import user_commands

log = logging.getLogger(__name__)


async def advertise(session: AcpSession, send: commands.Send,
                    heard: Sequence[Event] = ()) -> None:
    """The notice of a held project, what the SessionStart hooks said (``heard``: their
    notices, as agent text: there is no turn yet to think in), then the commands (again
    with the servers' prompts)."""
    await trust.notice(session, send)
    masker = EventMasker(session.settings.secrets)  # as a turn's events are
    for event in heard:
        for said in masker(event):
            if isinstance(said, Notice):
                await send(own_text(f"{clean(said.message)}\n"))
    await offer_commands(session, send)
    if session.hub is None:
        return
    from tui_agent.wiring import mcp_context

    with contextlib.suppress(Exception):
        await session.hub.wait_all()
        session.prompts = await mcp_context.prompt_list(session.hub)
        if session.prompts:
            await send(commands.available(session))


async def offer_commands(session: AcpSession, send: commands.Send) -> None:
    """The commands with the command files read again (a command file that cannot be used
    goes to the log, the editor's, named with its file and line)."""
    with contextlib.suppress(OSError):
        session.commands = await asyncio.to_thread(
            user_commands.registry_in, session.cwd, commands.BUILT_IN)
    for problem in session.commands.problems:
        log.warning("command file: %s", problem)
    await send(commands.available(session))
