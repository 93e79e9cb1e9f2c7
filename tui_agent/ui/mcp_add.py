"""``/mcp add ...`` and the servers screen's ``a``: a server added from inside the app,
with the words of ``tui-agent mcp add`` (:mod:`tui_agent.wiring.mcp_add` parses and
checks them for both).

The file is written in a thread (the URL check may wait seconds), then the config is
reloaded at once, as an edit of the file would be after the watcher saw it: the hub
starts the new server and the servers screen shows it. How its first start went is
said in the transcript once it is known; a server that fails stays added, with the way
to fix or remove it.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING

from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from tui_agent.ui.chat import ChatApp

USAGE = "/mcp add NAME -- COMMAND [ARGS...]  or  /mcp add NAME --url URL"
TELL_WITHIN = 60.0
"""Seconds the first start may take before the transcript gives up telling how it went
(the servers screen still shows it)."""


async def command(app: ChatApp, arg: str) -> None:
    """``/mcp ...``: only ``add`` so far (``tui-agent mcp`` has the rest)."""
    try:
        words = shlex.split(arg)
    except ValueError as exc:
        await app.transcript.note(f"/mcp: {exc}", "error")
        return
    if not words or words[0] != "add":
        await app.transcript.note(f"/mcp: {USAGE} (list, get, remove and import: "
                                  "'tui-agent mcp' on the command line)", "warning")
        return
    ok, said = await add(app, words[1:])
    await app.transcript.note(said, "info" if ok else "error")


async def add(app: ChatApp, words: list[str] | str) -> tuple[bool, str]:
    """Add the server ``words`` describe; whether it was written, and what to say."""
    from tui_agent.ui.startup import Startup
    from tui_agent.wiring.mcp_add import AddError, masked, parse_add
    from tui_agent.wiring.mcp_add import add as write

    try:
        req = parse_add(shlex.split(words) if isinstance(words, str) else words)
        start = app.start if isinstance(app.start, Startup) else None
        layers = [(layer.kind, layer.file) for layer in app.options.settings.layers]
        added = await asyncio.to_thread(
            write, req, config_file=start.config if start else None, layers=layers,
            cwd=start.cwd if start else None)
    except (AddError, ValueError) as exc:
        return False, clean(str(exc))
    said = masked(f"added {req.name} to {added.place()}: {req.shown()}", req)
    said += "".join(f"; {note}" for note in added.notes)
    reload = getattr(app, "reload_now", None)  # AgentApp's: live reload
    if start is None or reload is None or not req.start:
        return True, clean(said + "; it starts with the next start of tui-agent")
    reload()
    app.run_worker(_tell_start(app, req.name, added.place()), group="mcp-add",
                   exit_on_error=False)
    return True, clean(said + "; starting it (ctrl+s shows it)")


async def _tell_start(app: ChatApp, name: str, place: str) -> None:
    """Once the new server's first start has ended: how it went, in the transcript."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TELL_WITHIN
    status = None
    while loop.time() < deadline:
        status = next((s for s in app.backend.statuses() if s.name == name), None)
        if status is not None and status.state not in ("connecting",):
            break
        await asyncio.sleep(0.2)
    if status is None:
        return
    if status.state in ("connected", "idle"):
        await app.transcript.note(f"{name}: {status.state}, {status.tools} tools")
        return
    await app.transcript.note(
        clean(f"{name} is {status.state}: {status.last_error or 'no answer'}; it stays in "
              f"{place}: fix it there, or remove it with 'tui-agent mcp remove {name}'"),
        "error")
