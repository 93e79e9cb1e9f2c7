"""An MCP server inside a container, reached over ``docker exec``: the exec's byte stream.

The exec is interactive (stdin attached, no TTY, so the JSON-RPC bytes are never
rewritten) and started by speaking the engine's HTTP API on an asyncio connection
(``POST /exec/{id}/start`` with ``Upgrade: tcp``), so no byte that follows the response
headers can be lost to a blocking client's buffer. Its output arrives in Docker's
multiplexed frames: an 8-byte header (stream 1 stdout or 2 stderr, then a big-endian
length) before each chunk; frames do not follow lines, so stdout is buffered and split
into lines here, and stderr goes to the server's log file. :func:`streams` hands the
MCP SDK the same pair of memory streams its own stdio transport gives it.
"""


from __future__ import annotations

import asyncio
import contextlib
import json
import os
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO
from urllib.parse import urlparse

from tui_agent.tools.text import clean
from tui_agent.tools.transports.docker_engine import DockerFailure, engine_error

STOP_GRACE = 2.0
"""Seconds a server gets to exit after its stdin closes before the connection is dropped."""
OnEvent = Callable[[str, str], None]


async def _open_engine(host: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    url = urlparse(host)
    if url.scheme == "unix":
        return await asyncio.open_unix_connection(url.path, limit=2 ** 20)
    if url.scheme in ("tcp", "http"):
        if os.environ.get("DOCKER_TLS_VERIFY"):
            raise DockerFailure("docker exec over TLS (DOCKER_TLS_VERIFY) is not supported: "
                                "use the engine's unix socket or an SSH-forwarded one")
        return await asyncio.open_connection(url.hostname, url.port or 2375, limit=2 ** 20)
    raise DockerFailure(f"docker_host '{host}' is not supported for docker exec (use "
                        "unix:///path or tcp://host:port)")


async def start_exec(host: str, version: str,
                      exec_id: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """POST /exec/{id}/start and take over the connection as the exec's raw stream."""
    try:
        reader, writer = await _open_engine(host)
    except OSError as exc:
        raise DockerFailure(engine_error(exc, host)) from None
    body = json.dumps({"Detach": False, "Tty": False}).encode()
    writer.write(f"POST /v{version}/exec/{exec_id}/start HTTP/1.1\r\nHost: docker\r\n"
                 "Content-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    await writer.drain()
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        writer.close()
        raise DockerFailure(f"docker exec refused: the engine closed the connection "
                            f"({type(exc).__name__})") from None
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status.split(" ", 2)
    if len(parts) < 2 or parts[1] not in ("101", "200"):
        detail = b""
        with contextlib.suppress(Exception):
            detail = await asyncio.wait_for(reader.read(4096), 2)
        writer.close()
        message = detail.decode("utf-8", "replace")
        with contextlib.suppress(ValueError, AttributeError):
            message = json.loads(message.strip().splitlines()[-1])["message"]
        raise DockerFailure(f"docker exec refused: {clean(message)[:300] or status}")
    return reader, writer


@asynccontextmanager
async def exec_streams(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   errlog: TextIO | None, why_ended: Callable[[str, bool], Any],
                   on_event: OnEvent) -> AsyncIterator[tuple[Any, Any]]:
    """Frames from ``reader`` to the session; the session's messages to ``writer``."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    stopping = False
    ended = anyio.Event()
    noise, answered = "", False

    async def deliver(line: bytes) -> None:
        nonlocal noise, answered
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return
        item: SessionMessage | Exception
        try:
            item = SessionMessage(types.jsonrpc_message_adapter.validate_json(text,
                                                                             by_name=False))
            answered = True
        except ValueError as exc:
            item, noise = exc, clean(text)[:300]
        # Once the session is gone, what is left is only drained (the server may be
        # flushing on its way out).
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.send(item)

    async def read_frames() -> None:
        pending = b""
        try:
            async with to_session:
                with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, OSError):
                    while True:
                        header = await reader.readexactly(8)
                        kind, size = struct.unpack(">BxxxL", header)
                        payload = await reader.readexactly(size) if size else b""
                        if kind == 2:
                            if errlog is not None:
                                errlog.write(payload.decode("utf-8", "replace"))
                                errlog.flush()
                            continue
                        pending += payload
                        *lines, pending = pending.split(b"\n")
                        for line in lines:
                            await deliver(line)
                if pending:
                    await deliver(pending)
                if not stopping:
                    reason = await why_ended(noise, answered)
                    if errlog is not None:
                        errlog.write(f"[tui-agent] {reason}\n")
                        errlog.flush()
                    on_event("closed", reason)
        finally:
            ended.set()

    async def write_messages() -> None:
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    writer.write(data.encode() + b"\n")
                    await writer.drain()
        except (ConnectionError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_frames)
        tasks.start_soon(write_messages)
        try:
            yield read_stream, write_stream
        finally:
            stopping = True
            with anyio.CancelScope(shield=True):
                await read_stream.aclose()
                await write_stream.aclose()
                with contextlib.suppress(OSError, RuntimeError):
                    writer.write_eof()  # the server's stdin closes: it should exit
                with anyio.move_on_after(STOP_GRACE):
                    await ended.wait()
                writer.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(writer.wait_closed(), 1)
            tasks.cancel_scope.cancel()
