"""``/memory``: what project memory was read (each file with its tokens, the project's
files not read until the project is trusted, the problems), and a file of it opened in
``$EDITOR`` (the app suspends as for ``/edit``); the edit applies at the next turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

if TYPE_CHECKING:
    from tui_agent.core.agent import Agent
    from tui_agent.ui.chat import ChatApp
    from tui_agent.ui.commands import Command


async def memory(app: ChatApp, command: Command) -> None:
    """``/memory``: the list; ``/memory N``: open the N-th file; ``/memory user`` or
    ``/memory project``: open (or start) that scope's AGENTS.md."""
    agent = app.backend.agent
    for problem in await agent.prompt.refresh():
        await app.transcript.note(clean(problem), "warning")
    arg = command.arg.strip()
    if not arg:
        await app.transcript.note(await report(agent))
        return
    path = _chosen(agent, arg)
    if path is None:
        await app.transcript.note(f"/memory {clean(arg)}: give a number from /memory's list, "
                                  "user or project", "warning")
        return
    await edit(app, path)


async def report(agent: Agent) -> str:
    """The files read, in the order the model reads them, with their tokens."""
    read = agent.prompt.memory
    counter = await agent.context.counter(agent.llm)
    sizes = await asyncio.to_thread(lambda: [counter.text(f.text) for f in read.files])
    lines = [f"memory: {counted(len(read.files), 'file')}, {sum(sizes):,} tokens "
             "(later files win where they disagree)"]
    for number, (file, tokens) in enumerate(zip(read.files, sizes, strict=True), 1):
        by = f", imported by {file.imported_by.name}" if file.imported_by else ""
        lines.append(f"  {number}. {clean(str(file.path))}  ({file.scope}{clean(by)}, "
                     f"{tokens:,} tokens)")
    lines += [f"  not read (the project is not trusted): {clean(str(p))}"
              for p in read.untrusted]
    lines += [f"  ⚠ {clean(str(p))}" for p in read.problems]
    lines.append("/memory N opens one in $EDITOR; /memory user or /memory project opens "
                 "(or starts) that AGENTS.md. Edits apply at the next turn.")
    return "\n".join(lines)


def _chosen(agent: Agent, arg: str) -> Path | None:
    files = agent.prompt.memory.files
    if arg.isdigit():
        return files[int(arg) - 1].path if 0 < int(arg) <= len(files) else None
    reader = agent.prompt.memory_reader
    where = reader.where if reader is not None else None
    if where is None:
        return None
    if arg == "user" and where.user_dir is not None:
        return where.user_dir / where.names[0]
    if arg == "project":
        return where.cwd / where.names[0]
    return None


async def edit(app: ChatApp, path: Path) -> None:
    """``path`` in ``$EDITOR`` (its folder made first, for a file to start)."""
    from tui_agent.ui.composer import editor_command, run_editor

    command = editor_command()
    if command is None:
        await app.transcript.note("no editor: set $EDITOR (or $VISUAL)", "warning")
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        done = await run_editor(app, command, path)
    except OSError as exc:
        await app.transcript.note(f"the editor {clean(command[0])} failed: {clean(str(exc))}",
                                  "error")
        return
    if done.returncode != 0:
        await app.transcript.note(f"the editor {clean(command[0])} exited with "
                                  f"{done.returncode}", "warning")
        return
    await app.transcript.note(f"{clean(str(path))} saved: the next turn reads it")


async def init(app: ChatApp, command: Command) -> None:
    """``/init``: a turn with a fixed instruction, in which the model looks at the project
    and drafts its memory file; the draft is written only once the approval question,
    showing its diff, is approved. Denied: nothing is written, and the transcript says so."""
    from tui_agent.core.prompt import init as drafting

    await app.loaded.wait()
    if app.turns.running():
        app.notify("a reply is still coming: esc stops it, then /init", severity="warning")
        return
    reader = app.backend.agent.prompt.memory_reader if app.backend.has_model() else None
    where = reader.where if reader is not None else None
    path = drafting.target(where) if where is not None else None
    if where is None or path is None:
        await app.transcript.note(drafting.NO_PROJECT if where is not None else
                                  "/init: no model yet: /model chooses one", "warning")
        return
    root = where.root
    assert root is not None  # a target is in the project root

    async def offer() -> None:
        reply = drafting.last_reply(app.backend.agent.messages)
        draft = drafting.draft_of(reply) if reply is not None else None
        if draft is None:
            await app.transcript.note(drafting.no_draft(path), "warning")
            return
        await ask(app, path, root, draft)

    await app.turns.send(drafting.instruction(path), after=offer)


async def ask(app: ChatApp, path: Path, root: Path, draft: str) -> None:
    """The approval question with the draft's diff; the file written only if approved."""
    from tui_agent.core.permissions import Decision
    from tui_agent.core.prompt import init as drafting
    from tui_agent.ui.screens.approval import ApprovalScreen

    call = drafting.question(path, root, draft)

    async def answered(decision: Decision | None) -> None:
        shown = clean(str(path))
        if decision is None or not decision.approved:
            await app.transcript.note(f"/init: denied: {shown} not written", "warning")
            return
        try:
            await asyncio.to_thread(drafting.write, path, draft)
        except OSError as exc:
            await app.transcript.note(drafting.cannot_write(path, exc), "error")
            return
        read = await asyncio.to_thread(_read_after, app, path)
        await app.transcript.note(drafting.wrote(path, draft, read))

    await app.push_screen(ApprovalScreen(call, heading=f"Write {path.name}?"), answered)


def _read_after(app: ChatApp, path: Path) -> bool:
    """After ``/init`` wrote ``path``: whether the next turn reads it
    (:func:`~tui_agent.core.prompt.init.trust_after`)."""
    from tui_agent.core.prompt.init import trust_after

    reader = app.backend.agent.prompt.memory_reader
    return reader is None or trust_after(reader.where, path)
