"""Line-mode chat on a plain terminal: the headless way to hold a conversation.

Each line is a turn; Ctrl-C cancels the reply in flight (what arrived is kept),
Ctrl-C at the prompt or Ctrl-D quits; ``/agents`` lists the sub-agents. Every message
is in the session file as it happens, so quitting at any moment loses nothing.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import IO, TYPE_CHECKING

from tui_agent.core.attachments import AttachError, content
from tui_agent.headless.turn import attached, one_turn

if TYPE_CHECKING:
    from tui_agent.core.agent import Agent
    from tui_agent.headless.printers import Printer


async def read_line(prompt: str, out: IO[str], stdin: IO[str] = sys.stdin) -> str | None:
    """One line from ``stdin`` without blocking the event loop; None at end of input."""
    loop = asyncio.get_running_loop()
    out.write(prompt)
    out.flush()
    ready: asyncio.Future[str] = loop.create_future()

    def on_ready() -> None:
        if not ready.done():
            ready.set_result(stdin.readline())

    loop.add_reader(stdin.fileno(), on_ready)
    try:
        line = await ready
    finally:
        loop.remove_reader(stdin.fileno())
    return None if line == "" else line.rstrip("\n")


async def chat_loop(agent: Agent, printer: Printer, out: IO[str],
                    stdin: IO[str] | None = None) -> int:
    """The chat, each line of ``stdin`` (the process's by default) a turn."""
    loop = asyncio.get_running_loop()
    out.write(f"tui-agent · {agent.llm.model} · Ctrl-C cancels a reply, Ctrl-D quits\n")
    code = 0
    while True:
        line = await read_line("\n› ", out, stdin or sys.stdin)
        if line is None or line.strip() in ("/quit", "/exit"):
            out.write("\n")
            return code
        if not line.strip():
            continue
        if line.strip() == "/agents":
            from tui_agent.core.subagents.report import agents_report

            subagents = agent.subagents
            out.writelines(f"{row}\n" for row in agents_report(subagents.definitions(),
                                                               subagents.problems))
            continue
        try:  # @path references, as in a one-turn run
            files = attached(line, [], agent.llm)
        except AttachError as exc:
            out.write(f"{exc}; nothing was sent\n")
            continue
        message = content(files) if files.attachments else files.text
        turn = asyncio.create_task(one_turn(agent, message, printer))
        loop.add_signal_handler(signal.SIGINT, turn.cancel)
        try:
            code = await turn
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():
                raise  # we were cancelled ourselves, not just the turn
            out.write("\n(cancelled; what arrived is kept)\n")
        finally:
            loop.remove_signal_handler(signal.SIGINT)

