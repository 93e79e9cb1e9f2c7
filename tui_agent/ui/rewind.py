"""``/rewind``: a picker of the conversation's user messages (newest first); picking one
takes the conversation back to just before it, as a new branch (the old session file is
kept, and ``/resume`` still finds it), and puts that message back in the prompt to send
again or change. When the built-in tools changed files since then, a second choice asks
whether to restore them too; files other servers' tools wrote are named as not
restorable. The branch and the restore are the core's (:mod:`tui_agent.core.rewind`),
run in a thread: the branch first, then the files (a branch that fails leaves them as they
are; a restore that fails after it names each file that did not come back).
"""

from __future__ import annotations

import asyncio
import os
from datetime import datetime
from typing import TYPE_CHECKING

from textual.widgets import TextArea

from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted
from tui_agent.ui.widgets.history import with_markers

if TYPE_CHECKING:
    from tui_agent.builtin.checkpoints import Restored
    from tui_agent.core.rewind import Plan
    from tui_agent.core.session import Conversation
    from tui_agent.ui.chat import ChatApp

ONLY = "conversation"
BOTH = "files"


def rows(conv: Conversation) -> list[tuple[str, str]]:
    """The picker's rows: ``14:05  the message's words``, newest first, each valued by
    its place among the conversation's messages."""
    from tui_agent.core.rewind import quoted
    from tui_agent.core.session.branch import user_points

    out = []
    for point in reversed(user_points(conv)):
        when = f"{datetime.fromtimestamp(point.at):%H:%M}" if point.at else "     "
        out.append((str(point.index), f"{when}  {quoted(point.text)}"))
    return out


def file_choices(plan: Plan, folder: str | None) -> list[tuple[str, str]]:
    from tui_agent.core.rewind import shown

    files = ", ".join(clean(shown(p, folder)) for p in plan.restorable[:3])
    more = f" and {len(plan.restorable) - 3} more" if len(plan.restorable) > 3 else ""
    return [(ONLY, "the conversation only (files stay as they are)"),
            (BOTH, f"the conversation and {counted(len(plan.restorable), 'file')} "
                   f"({files}{more})")]


async def pick(app: ChatApp) -> None:
    """``/rewind``."""
    from tui_agent.ui.screens.picker import Picker

    if app.turn_running():
        app.notify("a reply is still coming: esc stops it, then /rewind", severity="warning")
        return
    conv = await asyncio.to_thread(app.backend.current)
    listed = rows(conv) if conv is not None else []
    if conv is None or not listed:
        await app.transcript.note("nothing to rewind yet: no message sent in this "
                                  "conversation")
        return

    async def chosen(value: str | None) -> None:
        if value is not None and conv is not None:
            await _to(app, conv, int(value))

    await app.push_screen(Picker("Rewind to before which message?", listed,
                                 hint="the conversation goes on from just before it, as "
                                      "a new branch (this one is kept); enter picks"),
                          chosen)


async def _to(app: ChatApp, conv: Conversation, index: int) -> None:
    from tui_agent.core.rewind import folder_of, plan
    from tui_agent.core.session.branch import user_points
    from tui_agent.ui.screens.picker import Picker

    point = next(p for p in user_points(conv) if p.index == index)
    found = await asyncio.to_thread(plan, conv, point)
    folder = folder_of(conv)
    if not found.restorable:
        await _rewind(app, conv, found, files=False)
        return

    async def chosen(value: str | None) -> None:
        if value is not None:
            await _rewind(app, conv, found, files=value == BOTH)

    await app.push_screen(Picker("Restore the files too?", file_choices(found, folder),
                                 hint="only what the built-in tools changed can be "
                                      "restored"), chosen)


async def _rewind(app: ChatApp, conv: Conversation, found: Plan, *, files: bool) -> None:
    from tui_agent.core.rewind import folder_of, restore, roots_of
    from tui_agent.core.session import SessionError

    try:
        new = await asyncio.to_thread(app.backend.branch, conv, found.point.index)
    except (SessionError, OSError) as exc:
        await app.transcript.note(f"/rewind failed, nothing was changed: {clean(str(exc))}",
                                  "error")
        return
    restored = None
    if files:
        roots = roots_of(conv, [os.getcwd(), *app.backend.settings.config.agent.roots])
        restored = await asyncio.to_thread(restore, found, roots, new)
    await app.transcript.replay(with_markers(new.messages, new.compactions), new.calls, new.path,
                                app.backend.settings.secrets)
    app.status.usage, app.status.context = app.backend.agent.usage, None
    app.show_price()
    await app.transcript.note(summary(conv, new, found, restored, folder_of(conv)))
    prompt = app.chat.query_one("#prompt", TextArea)
    prompt.load_text(found.point.text if found.point.text != "(no words)" else "")
    prompt.move_cursor(prompt.document.end)


def summary(old: Conversation, new: Conversation, found: Plan, restored: Restored | None,
            folder: str | None) -> str:
    """What ``/rewind`` did, in a few lines: the branch, the files restored or not."""
    from tui_agent.core.rewind import file_lines

    return "\n".join([f"rewound to before your message; this is a new branch {new.id} "
                      f"({counted(len(new.entries), 'message')}; {old.id} is kept)",
                      *file_lines(found, restored, folder)])
