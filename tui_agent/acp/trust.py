"""A project whose files wait for the person's trust, seen from an editor. The app asks
with its trust dialog and ``run`` warns on stderr; an editor's session would otherwise
skip the project's memory, skills and commands without a word. So when a session opens
(``session/new``, ``session/load``) in such a project, the editor gets one agent message:
the headless warning's list of what is held, and how to trust it.

``/trust`` is the editor's way to agree: a ``session/request_permission`` whose tool call
lists exactly what is held (the trust dialog's lines), answered "Trust this project" or
"Not now". Trusted, the project's memory is read from the next turn and its commands are
offered at once; its servers, settings and skills apply once the agent starts again
(this process read its configuration at start).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    PermissionOption,
    TextContentBlock,
    ToolCallLocation,
    ToolCallUpdate,
)

from tui_agent.acp.chunks import own_text
from tui_agent.config.held import HeldProject
from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from acp.interfaces import Client

    from tui_agent.acp.sessions import AcpSession

log = logging.getLogger(__name__)
Send = Callable[[Any], Awaitable[None]]
TRUST, NOT_NOW = "trust", "reject_once"
HOW = ("Trust it: send /trust here (it shows this list and asks), or run tui-agent in "
       "that folder and agree.")
"""How the editor's notice says to trust the project."""


def held_at(folder: Path) -> HeldProject | None:
    """What the project of ``folder`` holds back (None: nothing, or its configuration
    cannot be read: that is logged, the session goes on as before)."""
    from tui_agent.config import ConfigError
    from tui_agent.wiring.prompt import held_in

    try:
        return held_in(folder)
    except (ConfigError, OSError) as exc:
        log.warning("the project of %s: %s", folder, exc)
        return None


async def notice(session: AcpSession, send: Send) -> None:
    """The one message a session opened in a held project gets."""
    from tui_agent.config.show import held_warning

    held = await asyncio.to_thread(held_at, session.cwd)
    if held is not None:
        await send(own_text(clean(held_warning(held, HOW)) + "\n\n"))


async def trust(session: AcpSession, client: Client, send: Send) -> bool:
    """``/trust``: what the session's project holds, asked about; whether it was trusted
    (the editor is told either way)."""
    from tui_agent.config.show import held_lines
    from tui_agent.config.trust import record_trust

    held = await asyncio.to_thread(held_at, session.cwd)
    if held is None:
        await send(own_text(
            "/trust: nothing in this project waits for your trust."))
        return False
    root = held.content_root or held.project.root
    lines = "\n".join(f"- {line}" for line in held_lines(held))
    question = ToolCallUpdate(
        tool_call_id="trust", title=clean(f"Trust the project in {root}?"), kind="other",
        status="pending", locations=[ToolCallLocation(path=str(root))],
        content=[ContentToolCallContent(type="content", content=TextContentBlock(
            type="text", text=clean(f"Its files ask for:\n{lines}")))])
    options = [PermissionOption(option_id=TRUST, name="Trust this project",
                                kind="allow_always"),
               PermissionOption(option_id=NOT_NOW, name="Not now", kind="reject_once")]
    try:
        answer = await client.request_permission(session_id=session.id, tool_call=question,
                                                 options=options)
    except Exception as exc:  # the editor could not answer: nothing is trusted unasked
        log.warning("session/request_permission failed: %s", exc)
        return False
    outcome = answer.outcome
    if not isinstance(outcome, AllowedOutcome) or outcome.option_id != TRUST:
        await send(own_text(clean(f"/trust: not trusted: {root}'s files "
                                                   "stay unread.")))
        return False
    try:
        await asyncio.to_thread(record_trust, held)
    except OSError as exc:
        await send(own_text(clean(
            f"/trust: could not remember the trust: {exc.strerror or exc}")))
        return False
    await send(own_text(clean(
        f"/trust: trusted the project in {root}: its memory is read from the next turn and "
        "its commands are offered now; its servers, settings and skills apply once the "
        "agent starts again.")))
    return True
