"""``tui-agent acp``: the agent on stdin/stdout until the editor closes the connection.

stdout is the protocol, so it is taken first: the process's own file descriptor 1 is
pointed at stderr (a library or a child process that prints lands there, not amid the
JSON-RPC), and the protocol writes to a duplicate of the original. Logs go to stderr. A
client that goes away (end of input) ends the run cleanly: turns are cancelled, servers
closed, sessions kept.

Ctrl-C (SIGINT) ends the run the same way, with exit code 130. It is taken by the event
loop, not raised wherever the interpreter happens to be, so it is never lost in a
library's ``except`` and the close always runs. Typed in a terminal, the command takes
SIGINT even when it started ignored (a background job of a non-interactive shell
inherits it so): a person who sees it wait must be able to end it. Started by an editor
with SIGINT ignored, it stays ignored, as the editor asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Coroutine
from typing import IO, TYPE_CHECKING, Any, BinaryIO, cast

from tui_agent.config import Settings
from tui_agent.core.filters import ToolFilter

if TYPE_CHECKING:
    from acp.interfaces import Agent

STDIO_LIMIT = 50 * 1024 * 1024
"""Bytes of one message (an image in a prompt is large)."""
TERMINAL_HINT = ("tui-agent acp: this speaks the Agent Client Protocol on stdin/stdout and "
                 "waits for an editor to start it (set one up as the README's 'In your "
                 "editor (ACP)' says); Ctrl-C ends it")
"""Said on stderr when stdin is a terminal: a person typed the command, not an editor."""


def serve(settings: Settings, tool_filter: ToolFilter, err: IO[str] = sys.stderr) -> int:
    """Run the ACP agent on this process's stdio; the exit code."""
    for name, stream in (("input", sys.stdin), ("output", sys.stdout)):
        if not _pipe_like(stream):
            err.write(f"tui-agent acp: its {name} is a file; it talks over pipes, as an "
                      "editor starts it (see docs/acp.md)\n")
            return 2
    on_terminal = sys.stdin.isatty()
    if on_terminal:  # typed in a terminal: what it waits for, or it looks hung
        err.write(TERMINAL_HINT + "\n")
        err.flush()
    protocol_out = _take_stdout()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="tui-agent acp: %(levelname)s %(name)s: %(message)s")
    interrupted: list[int] = []
    try:
        _run(_main(settings, tool_filter, protocol_out, _takes_ctrl_c(on_terminal),
                   interrupted))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last line of defence: a sentence on stderr, exit 1
        err.write(f"tui-agent acp: {type(exc).__name__}: {exc}\n")
        return 1
    return 130 if interrupted else 0


def _takes_ctrl_c(on_terminal: bool) -> bool:
    """Whether the run ends on SIGINT: always on a terminal (a person typed the command,
    maybe as ``tui-agent acp &`` in a script, which starts it with SIGINT ignored); from
    an editor, unless the editor started it with SIGINT ignored."""
    return on_terminal or signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


def _pipe_like(stream: IO[str]) -> bool:
    """Whether asyncio can read or write ``stream`` as a pipe (a pipe, a socket or a
    terminal; not a regular file)."""
    import stat

    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _run(main: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run(main)``, but the tasks still running at the end (a turn that swallows
    its cancellations) are waited for :data:`~tui_agent.acp.sessions.CLOSE_WAIT` seconds,
    not forever: the editor is closing, and the process must end."""
    from tui_agent.acp.sessions import CLOSE_WAIT

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    finally:
        try:
            rest = asyncio.all_tasks(loop)
            for task in rest:
                task.cancel()
            if rest:
                loop.run_until_complete(asyncio.wait(rest, timeout=CLOSE_WAIT))
            gens = loop.create_task(loop.shutdown_asyncgens())
            loop.run_until_complete(asyncio.wait({gens}, timeout=CLOSE_WAIT))
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _take_stdout() -> BinaryIO:
    """The protocol's stream, and fd 1 (and ``sys.stdout``) pointed at stderr."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


async def _main(settings: Settings, tool_filter: ToolFilter, protocol_out: BinaryIO,
                takes_ctrl_c: bool, interrupted: list[int]) -> None:
    """Serve until the end of input, SIGTERM, SIGHUP or (when ``takes_ctrl_c``) SIGINT;
    a SIGINT is noted in ``interrupted``."""
    from acp.agent.connection import AgentSideConnection

    from tui_agent.acp.agent import TuiAgent
    from tui_agent.acp.wire import Wire
    from tui_agent.codemode import spare

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, protocol_out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    checked = asyncio.StreamReader(limit=STDIO_LIMIT)
    gatekeeper = asyncio.ensure_future(_well_formed(reader, checked, writer))
    agent = TuiAgent(settings, tool_filter)
    # TuiAgent answers the stable methods; the SDK answers "method not found" for the rest.
    # session/close and session/resume are stable ACP; SDK 0.12.1 still files them under
    # "unstable" (its other unstable method, fork, is answered "method not found": not
    # ours). What it does not route at all (session/delete, $/cancel_request) the wire
    # answers.
    wire = Wire(checked, writer, agent.cancel_request,
                {"session/delete": agent.delete_session})
    agent.wire = wire
    conn = AgentSideConnection(cast("Agent", agent), wire, listening=False,
                               use_unstable_protocol=True)
    work = asyncio.ensure_future(conn.listen())

    def ctrl_c() -> None:
        interrupted.append(signal.SIGINT)
        work.cancel()

    handled = [signal.SIGTERM, signal.SIGHUP]
    for sig in handled:
        loop.add_signal_handler(sig, work.cancel)
    if takes_ctrl_c:
        loop.add_signal_handler(signal.SIGINT, ctrl_c)
        handled.append(signal.SIGINT)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await work
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        gatekeeper.cancel()
        await agent.close()
        with contextlib.suppress(Exception):
            await asyncio.shield(conn.close())
        await spare.close()


async def _well_formed(source: asyncio.StreamReader, sink: asyncio.StreamReader,
                       out: asyncio.StreamWriter) -> None:
    """Only JSON objects reach the SDK; a line that is not one is answered with JSON-RPC's
    parse error (-32700) or invalid request (-32600), as the spec says, instead of being
    dropped with a traceback on stderr and the client left waiting."""
    try:
        while (line := await _next_line(source)) != b"":
            if line is None:
                _refuse(out, -32700, f"Parse error: a message over {STDIO_LIMIT} bytes")
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                _refuse(out, -32700, f"Parse error: not JSON ({exc})")
                continue
            if not isinstance(message, dict):
                _refuse(out, -32600, "Invalid Request: a message is a JSON object")
                continue
            problem = _malformed(message)
            if problem:
                _refuse(out, -32600, f"Invalid Request: {problem}")
                continue
            if "id" not in message and message.get("method") not in NOTIFICATIONS:
                # JSON-RPC answers no notification, and ACP says to ignore one not known
                # (the SDK would log a traceback for it)
                logging.getLogger(__name__).info("ignored the notification %.80r",
                                                 message.get("method"))
                continue
            sink.feed_data(line if line.endswith(b"\n") else line + b"\n")
    finally:
        sink.feed_eof()


NOTIFICATIONS = frozenset({"session/cancel", "$/cancel_request"})
"""The notifications this agent acts on; any other is dropped unanswered."""


def _malformed(message: dict[str, Any]) -> str:
    """What makes ``message`` no JSON-RPC request, notification or response (answered
    with id null: an id of the wrong type is no id to answer with); empty if nothing."""
    if "id" in message:
        rid = message["id"]
        if isinstance(rid, bool) or not isinstance(rid, str | int | float | None):
            return f"an id is a string, a number or null, not {type(rid).__name__}"
    if "method" in message and not isinstance(message["method"], str):
        return "a method is a string"
    if "method" not in message and "id" not in message:
        return "a message has a method (a request or notification) or an id (a response)"
    return ""


async def _next_line(source: asyncio.StreamReader) -> bytes | None:
    """The next line (``b""`` at the end of input), or None for a line over the limit,
    which is read to its end and dropped: the next line is the next message, not the
    oversized one's tail."""
    try:
        return await source.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:  # the end of input, maybe after a last line
        return exc.partial
    except asyncio.LimitOverrunError as exc:
        skip = exc.consumed
    while True:
        await source.readexactly(skip)  # what is buffered of the oversized line, dropped
        try:
            await source.readuntil(b"\n")
            return None
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError as exc:
            skip = exc.consumed


def _refuse(out: asyncio.StreamWriter, code: int, message: str) -> None:
    logging.getLogger(__name__).warning("refused a message: %s", message)
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    out.write(json.dumps(error).encode() + b"\n")
