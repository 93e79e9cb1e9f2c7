"""The headless run inside its event loop: the MCP servers not started early start, the
turn (or the line-mode chat) runs under the stop signals, and every server is closed
however it ends. :mod:`tui_agent.headless.run` sets the run up (the model checked, the
session opened, the agent made) and hands it here."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from contextlib import aclosing
from typing import IO, TYPE_CHECKING

from tui_agent.codemode import spare
from tui_agent.core.agent import Agent
from tui_agent.core.attachments import Prepared, content
from tui_agent.core.events import ErrorOccurred, Notice, ServerLog
from tui_agent.core.filters import ToolFilter
from tui_agent.headless import init
from tui_agent.headless.options import Run
from tui_agent.headless.printers import Printer
from tui_agent.headless.turn import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, one_turn
from tui_agent.tools.errors import ServerError
from tui_agent.tools.transports import stopping
from tui_agent.wiring import build

if TYPE_CHECKING:
    from tui_agent.tools.hub import Hub


async def drive(run: Run, agent: Agent, hub: Hub | None, printer: Printer, out: IO[str],
                 err: IO[str]) -> int:
    """The run inside the event loop: the MCP servers not started early start in the
    background, the turn (or the line-mode chat) runs, and every server is closed however
    it ends. SIGTERM and SIGHUP cancel like Ctrl-C does, so the closing still happens; a
    second one exits at once."""
    check: asyncio.Task[None] | None = None
    if hub is not None and run.verbose:
        hub.log_listeners.append(lambda line: printer.show(
            ServerLog(line.server, line.level, line.text, line.logger)))
    if hub is not None:
        hub.start()
        agent.tools = hub
        if run.tool_filter.tools is not None or run.tool_filter.exclude_tools:
            check = asyncio.create_task(_check_tool_patterns(hub, run.tool_filter, printer))
    loop = asyncio.get_running_loop()
    signals = [0]

    async def body() -> int:
        for event in await agent.session_start("resume" if run.resume else "startup"):
            printer.show(event)
        try:
            return await turns()
        finally:  # SessionEnd: as the run ends, however (a stop cuts its hooks short)
            for event in await agent.session_end("other"):
                printer.show(event)

    async def turns() -> int:
        text = run.prompt
        if run.compact:
            failed = False
            async with aclosing(agent.compactor.manual()) as events:
                async for event in events:
                    printer.show(event)
                    failed = failed or isinstance(event, ErrorOccurred)
            if failed or text is None:
                return EXIT_FAILED if failed else EXIT_OK
        if run.attach or run.mcp_prompt:
            try:
                text = await _from_servers(run, hub, agent)
            except (ValueError, ServerError) as exc:
                printer.show(ErrorOccurred(str(exc), kind="config"))
                return EXIT_USAGE
        if init.wanted(text) and not run.files:
            return await init.init_turn(agent, printer)
        if text is None:
            from tui_agent.headless.repl import chat_loop

            return await chat_loop(agent, printer, out)
        return await one_turn(agent, content(Prepared(text, run.files)) if run.files else text,
                              printer)

    work = asyncio.create_task(body())

    def stop() -> None:  # the first signal stops the work; a second leaves at once
        signals[0] += 1
        if signals[0] > 1:
            stopping.end_now()  # what a server started must not outlive us
            os._exit(EXIT_INTERRUPTED)  # every message is on disk already
        stopping.hurry()  # the run ends: no server gets the polite seconds to stop
        cancel_until_done()

    def cancel_until_done() -> None:
        """A library may swallow one cancellation and go on (litellm closes its stream in a
        shielded scope that catches everything): it is repeated until the work ends."""
        if not work.done():
            work.cancel()
            loop.call_later(CANCEL_AGAIN, cancel_until_done)

    # In a one-turn run Ctrl-C is ours too; the line-mode chat takes it per reply.
    one_shot = run.prompt is not None or bool(run.mcp_prompt) or bool(run.attach) \
        or run.compact
    handled = STOP_SIGNALS + ((signal.SIGINT,) if one_shot else ())
    for sig in handled:
        loop.add_signal_handler(sig, stop)
    try:
        try:
            code = await work
        except asyncio.CancelledError:
            work.cancel()  # we were cancelled ourselves (Ctrl-C at the chat's prompt)
            with contextlib.suppress(asyncio.CancelledError):
                await work
            code = EXIT_INTERRUPTED
        # A stop asked for is an interrupted run, however the work happened to end.
        return EXIT_INTERRUPTED if signals[0] else code
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        await spare.close()
        if check is not None:
            check.cancel()
        if hub is not None:
            await hub.close()
            build.save_metrics(hub, agent.session)


async def _check_tool_patterns(hub: Hub, tool_filter: ToolFilter, printer: Printer) -> None:
    """Once every server has listed its tools: say which ``--tools`` / ``--exclude-tools``
    patterns matched none (a typo would otherwise just leave the model without tools)."""
    await hub.wait_all()
    unmatched = tool_filter.unmatched_tools((s.server, s.tool) for s in hub.specs())
    if unmatched:
        known = ", ".join(sorted(s.name for s in hub.specs())) or "none"
        printer.show(Notice(f"tool pattern(s) {', '.join(map(repr, unmatched))} match no "
                            f"tool of the started servers (their tools: {known})"))


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a run like Ctrl-C does."""
CANCEL_AGAIN = 0.25
"""Seconds between two cancellations of work that did not end at the first."""


async def _from_servers(run: Run, hub: Hub | None, agent: Agent) -> str:
    """The turn's text with ``--attach`` resources before it, after ``--mcp-prompt``'s
    messages (roles kept) went into the conversation."""
    from tui_agent.wiring import mcp_context

    text = run.prompt
    if run.mcp_prompt:
        server, name = mcp_context.split_ref(run.mcp_prompt[0], "prompt")
        arguments = mcp_context.prompt_arguments(run.mcp_prompt[1:])
        earlier, text = await mcp_context.prompt_turn(hub, server, name, arguments, text)
        agent.add_messages(earlier)
    blocks = [await mcp_context.attachment(hub, ref) for ref in run.attach]
    return "\n\n".join([*blocks, text or ""]).strip()
