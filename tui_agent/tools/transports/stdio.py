"""The stdio transport: the ``mcp`` SDK's ``stdio_client`` with a reader that holds a big
message once.

The SDK reads the server's stdout as text and joins each piece to what it holds so far
(``buffer + chunk``), so a message of n bytes costs about n²/64 KB of copying and three
copies of it at once (14 MB, a 7 MB result sent as text and again as structured content,
took 6 s and 42 MB), and its last line stays alive until the next message arrives. Here a
small message's bytes are kept as they come, joined once at the newline and parsed by the
SDK's own ``validate_json``; a message that grows past :data:`SMALL_MESSAGE` is parsed as
its chunks arrive (:mod:`.jsonstream`: each long string held once, a repeated one not
again) and its values validated by the SDK's own adapter (``validate_python``). Either is
let go before the message is handed on. A line that does not parse (not UTF-8, not JSON,
nested too deep, a lone surrogate) is that message's error, and reading goes on. The rest
follows the SDK's ``stdio_client`` line for line: the spawn, the environment, the writer
and the shutdown the MCP spec orders are the SDK 2.3's private helpers (``mcp`` is pinned
below 2.4 for them, and a test checks they are there), with the timeouts that
:mod:`.stopping` shortens; the server's process is held as ``process`` in this
generator's frame, where :func:`~tui_agent.tools.transports.sdk.server_pid` reads it.

The server may be spawned before the SDK is imported (:func:`spawn`, as the SDK spawns
it) and handed to :func:`stdio_client`: loading the SDK takes 1.5 s here, and a server
written with it (our built-in one) spends as long loading it on its side, so the two
load at once instead of one after the other.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from anyio.abc import Process
    from mcp import StdioServerParameters

log = logging.getLogger("mcp.client.stdio")  # where the SDK logs what goes wrong here

INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""The variables a server inherits from us on POSIX (the SDK's
``DEFAULT_INHERITED_ENV_VARS``, which a test holds this to); the rest of its environment
is its config's ``env``."""


def default_environment() -> dict[str, str]:
    """The SDK's ``get_default_environment`` on POSIX: :data:`INHERITED`, but for values
    that are shell functions."""
    return {key: value for key in INHERITED
            if (value := os.environ.get(key)) is not None and not value.startswith("()")}


async def spawn(command: str, args: list[str], env: dict[str, str] | None,
                cwd: str | os.PathLike[str] | None, errlog: TextIO) -> Process | None:
    """Start a server as the SDK's ``stdio_client`` would (its own session, so its
    process group can be stopped whole), without loading the SDK. None on Windows, where
    the SDK's own spawn (a Job Object) is used."""
    if sys.platform == "win32":  # pragma: no cover
        return None
    import anyio

    return await anyio.open_process([command, *args], env=default_environment() | (env or {}),
                                    stderr=errlog, cwd=cwd, start_new_session=True)


@asynccontextmanager
async def stdio_client(server: StdioServerParameters, errlog: TextIO = sys.stderr,
                       spawned: Process | None = None) -> AsyncGenerator[Any, None]:
    """Spawn ``server`` (unless it was ``spawned`` already, by :func:`spawn`)
    and connect to it over its stdin and stdout (the SDK's ``stdio_client``, with
    :func:`read_messages` as its reader)."""
    import anyio
    import anyio.lowlevel
    from mcp.client import stdio as sdk
    from mcp.shared.message import SessionMessage

    process: Any = spawned  # the name server_pid reads
    if process is None:
        command = await sdk._get_executable_command(server.command)
        process = await sdk._create_platform_compatible_process(
            command=command, args=server.args,
            env=sdk.get_default_environment() | (server.env or {}), errlog=errlog,
            cwd=server.cwd)
    # No awaits until the task group is entered (a cancellation here would leak the server).
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        try:
            async with read_writer:
                try:
                    await read_messages(process.stdout, read_writer)
                finally:
                    await sdk._drain_stdout(process)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed the stdout stream under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                log.exception("Reading from the MCP server's stdout failed mid-session")

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((json + "\n").encode(
                        encoding=server.encoding, errors=server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the end instead of hanging
        finally:
            writer_done.set()

    async def shutdown() -> None:
        """The SDK's: stop traffic, flush, stop the server, release the streams."""
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT) as flush_scope:
            await writer_done.wait()
        if flush_scope.cancelled_caught:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # the server must never be left running
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


async def read_messages(stdout: Any, deliver: Any) -> None:
    """Each newline-ended message on ``stdout`` (a byte stream), parsed, sent to
    ``deliver`` (a parse error is sent as the exception, as the SDK does). A small
    message's bytes are joined once and parsed (:func:`parse`); one that grows past
    :data:`SMALL_MESSAGE` is parsed as it arrives (:class:`.jsonstream.JsonStream`), each
    chunk let go once read. Either is dropped before the next is read."""
    import anyio

    from tui_agent.tools.transports.jsonstream import JsonStream

    held = bytearray()  # a small message's bytes so far
    stream: JsonStream | None = None  # a big message's parse so far
    async for chunk in stdout:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if stream is not None:
                stream.feed(chunk[start:end])
                message = finish(stream)
                stream = None
            elif held:
                held += memoryview(chunk)[start:end]
                message = parse(held)
                held = bytearray()
            else:  # the whole line is in this chunk (the usual case)
                message = parse(chunk[start:end])
            start = end + 1
            try:
                await deliver.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the session is gone; only the drain remains
            del message  # a big result is not kept alive while the next one is read
        if stream is not None:
            stream.feed(chunk[start:])
        else:
            held += memoryview(chunk)[start:]
            if len(held) >= SMALL_MESSAGE:
                stream = JsonStream()
                stream.feed(held)
                held = bytearray()


SMALL_MESSAGE = 64 * 1024
"""Bytes below which a message goes through the SDK's own parse (pydantic's
``validate_json``, quicker than ``json`` then ``validate_python`` for the usual small
message; the copies it holds only matter for big ones, which are parsed as they arrive)."""


def parse(line: bytes | bytearray) -> Any:
    """One JSON-RPC message (a ``SessionMessage``) from the bytes of its line (a
    bytearray is emptied), or the error that says why it is not one: a small one by the
    SDK's own parse, a big one (a line that came whole) as :func:`read_messages` parses
    one that arrives in pieces."""
    if len(line) >= SMALL_MESSAGE:
        from tui_agent.tools.transports.jsonstream import JsonStream

        stream = JsonStream()
        stream.feed(line)
        if isinstance(line, bytearray):
            line.clear()
        del line
        return finish(stream)
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:  # decoded first: bytes that are not UTF-8 are refused as such
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(
            line.decode(), by_name=False))
    except ValueError as exc:
        log.exception("Failed to parse JSONRPC message from server")
        return exc


def finish(stream: Any) -> Any:
    """The ``SessionMessage`` of a message parsed as it arrived, or its error. The
    values are validated by the SDK's own adapter (``validate_python``: pydantic's
    ``validate_json`` on the whole text held about five times the message at once)."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        values = stream.values()
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(values,
                                                                            by_name=False))
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting too deep
        log.exception("Failed to parse JSONRPC message from server")
        return exc
