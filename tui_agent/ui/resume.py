"""``/resume`` without an id: a picker of the saved conversations, this project's first.

It opens on the conversations started in this project's folder (or below it), newest
first, each with when it was last written, its size and its title (the first prompt);
its last row shows the conversations of every folder, each with its folder. ``/resume
all`` opens that view at once; so does a project that has none of its own yet. The
listing itself is the core's (:mod:`tui_agent.core.session.listing`), read in a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.session.listing import (
    SessionInfo,
    folder_text,
    project_folder,
    split_by_folder,
    when_text,
)
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

if TYPE_CHECKING:
    from tui_agent.ui.chat import ChatApp

ALL = "\x00all"
"""The value of the row that shows every folder's conversations (no id looks like it)."""
EVERY = ("all", "--all")
"""``/resume all``: every folder's conversations at once."""
FOLDER_COLUMN = 24
"""The most cells a folder takes in the every-folder view (its start gives way)."""


def rows(infos: Sequence[SessionInfo], *, folder: bool = False) -> list[tuple[str, str]]:
    """The picker's rows for ``infos``: ``today 14:05  12 msgs  the first prompt`` (with
    the folder before the title in the every-folder view), in columns as wide as their
    widest cell, so that the titles line up and keep the most room."""
    cells = []
    for info in infos:
        line = [when_text(info.when), counted(info.messages, "msg")]
        if folder:
            shown = clean(folder_text(info.folder))
            line.append(shown if len(shown) <= FOLDER_COLUMN
                        else "…" + shown[-(FOLDER_COLUMN - 1):])
        cells.append(line)
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))] if cells else []
    out = []
    for info, line in zip(infos, cells, strict=True):
        padded = [c.rjust(w) if i == 1 else c.ljust(w)
                  for i, (c, w) in enumerate(zip(line, widths, strict=True))]
        out.append((info.id, "  ".join([*padded, " ".join(clean(info.title).split())])))
    return out


def choices(infos: Sequence[SessionInfo], folder: Path, *, every: bool
            ) -> tuple[str, list[tuple[str, str]]]:
    """The picker's title and rows: this project's conversations and a last row leading
    to the others, or (``every``) this project's first, then the others, with folders."""
    here, elsewhere = split_by_folder(infos, folder)
    name = clean(folder.name or str(folder))
    if every or not here:
        every_row = rows([*here, *elsewhere], folder=True)
        return f"Resume a conversation (every folder; {name}'s first)", every_row
    shown = rows(here)
    if elsewhere:
        shown.append((ALL, f"… every folder: {counted(len(elsewhere), 'more conversation')}"))
    return f"Resume a conversation in {name}", shown


async def pick(app: ChatApp, arg: str) -> None:
    """The picker (``arg``: empty, or ``all`` for every folder's conversations)."""
    from tui_agent.ui.screens.picker import Picker

    infos = await asyncio.to_thread(app.backend.sessions)
    if not infos:
        await app.transcript.note("no saved conversations yet")
        return
    folder = await asyncio.to_thread(project_folder, Path.cwd())

    async def chosen(ref: str | None) -> None:
        if ref == ALL:
            await show(every=True)
        elif ref:
            await app.resume(ref)

    async def show(*, every: bool) -> None:
        title, listed = choices(infos, folder, every=every)
        await app.push_screen(Picker(title, listed, hint="type to filter by title, date or "
                                     "folder; enter resumes"), chosen)

    await show(every=arg.strip().lower() in EVERY)
