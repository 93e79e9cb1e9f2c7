"""The transports the ``mcp`` SDK provides (stdio, SSE, streamable HTTP), set up safely;
Docker's MCP gateway is a stdio server too. stdio is the SDK's with a reader of our own
(:mod:`.stdio`), which holds a big message once instead of several times.

stdio servers get the SDK's minimal environment plus what the config names,
and their stderr goes to a log file, never the terminal (and never an unread
pipe, which blocks a chatty server at 64 KB). The stdio read stream is watched,
so a server that exits is noticed at once instead of at the next call. On Linux a
stdio server dies with tui-agent, even killed with -9 (:func:`dies_with_us`); elsewhere
it has the end of its input (every stdio server stops there). Once the terminal went away
a close does not wait out the SDK's polite stop (:mod:`.stopping`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import io
import logging
import os
import shutil
import signal
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from tui_agent.config.models import ServerConfig
from tui_agent.config.private import open_append
from tui_agent.tools.transports import stopping
from tui_agent.tools.transports.wrapped import WrappedRead

log = logging.getLogger(__name__)

OnEvent = Callable[[str, str], None]
"""``(kind, detail)``: ``closed`` when the stream ends."""


class WatchedRead(WrappedRead):
    """A read stream that reports its end, and lets a read result go once it was handed
    on (:meth:`_let_go`)."""

    def __init__(self, inner: Any, on_event: OnEvent) -> None:
        super().__init__(inner)
        self._on_event = on_event
        self._last: Any = None

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        self._let_go()
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_event("closed", "the server exited")
            raise
        self._last = item
        return item

    def _let_go(self) -> None:
        """The SDK's read loop holds the message it read last until the next one comes: a
        tool's whole result, for as long as the server says nothing more, and beside the
        next big one while that is read. When the loop asks for the next message it has
        handed the last one's result to the call that waits for it (a response is
        resolved as it is read), so the message's own reference to it is dropped: the
        result lives as long as that call keeps it. Requests and notifications, which the
        SDK may hand to tasks of their own, are left alone."""
        last, self._last = self._last, None
        message = getattr(last, "message", None)
        if isinstance(getattr(message, "result", None), dict) and \
                getattr(message, "method", None) is None:
            message.result = {}  # type: ignore[union-attr]


class Watched(AbstractAsyncContextManager[Any]):
    """Wraps a stdio transport so that :class:`WatchedRead` sees everything it reads, and
    its close is hurried when the app is (:mod:`.stopping`)."""

    def __init__(self, inner: AbstractAsyncContextManager[Any], on_event: OnEvent) -> None:
        self._inner = inner
        self._on_event = on_event
        self._pid: int | None = None

    async def __aenter__(self) -> Any:
        read, write = await self._inner.__aenter__()
        self._pid = server_pid(self._inner)
        if self._pid is None:
            log.warning("no pid found for a stdio server (has its transport changed?): "
                        "once the terminal goes, only the SDK's shorter waits hurry its "
                        "close, and a close already under way is not hurried")
            stopping.cannot_watch()
        stopping.started(self._pid)
        return WatchedRead(read, self._on_event), write

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        watcher = stopping.watch(self._pid)
        try:
            return await self._inner.__aexit__(exc_type, exc, tb)
        finally:
            try:
                await stopping.finish(watcher, self._pid)
            finally:
                stopping.ended(self._pid)


async def _never_left(process: Any) -> None:
    """Last on a stdio server's way out: a server spawned early whose transport never
    opened (the start failed or was cancelled before) is killed with its process group;
    one the transport stopped is left as it is."""
    if process.returncode is None:
        import anyio

        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        with anyio.move_on_after(2.0), contextlib.suppress(Exception):
            await process.wait()


def server_pid(transport: Any) -> int | None:
    """The pid of the server our ``stdio_client`` (:mod:`.stdio`, which follows the SDK's)
    started (a process group leader), or None. Like the SDK's, it hands out only the
    streams; its generator, suspended while the session runs, holds the process as
    ``process``. (Read from its frame: the SDK's own timeouts are read when a wait
    begins, so they cannot hurry a close already waiting; :mod:`.stopping` shortens them
    only as the fallback. A test pins this to our transport, and :class:`Watched` logs a
    warning when it finds nothing.)"""
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    process = frame.f_locals.get("process") if frame is not None else None
    pid = getattr(process, "pid", None)
    return pid if isinstance(pid, int) else None


class PrivateLog(logging.FileHandler):
    """A log file opened (when first written) private to the user, as every log of ours."""

    def _open(self) -> io.TextIOWrapper:
        return io.TextIOWrapper(open(open_append(Path(self.baseFilename)), "ab"),  # noqa: SIM115
                                encoding=self.encoding, errors=self.errors, line_buffering=False)


def route_sdk_logs(log_file: Path) -> None:
    """Send the SDK's own log records (a malformed line from a server comes with a
    traceback) to ``log_file`` instead of Python's last-resort handler on stderr,
    which would paint over a TUI); this module's own warnings go there too."""
    loggers = [logging.getLogger("mcp"), log]
    if any(getattr(h, "_tui_agent", False) for h in loggers[0].handlers):
        return
    handler = PrivateLog(log_file, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    handler._tui_agent = True  # type: ignore[attr-defined]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


async def open_transport(config: ServerConfig, stack: AsyncExitStack, errlog: TextIO | None,
                         on_event: OnEvent, *, auth: Any = None
                         ) -> AbstractAsyncContextManager[Any]:
    """The transport for ``config``; what it needs closing later goes on ``stack``.
    ``auth`` (an ``httpx.Auth``) goes with every request of an SSE or HTTP server."""
    if config.transport in ("stdio", "docker-gateway"):
        from tui_agent.tools.transports.stdio import spawn, stdio_client

        assert errlog is not None
        if config.transport == "docker-gateway":
            from tui_agent.tools.transports import docker_gateway

            await docker_gateway.detect(config)
            command, *args = docker_gateway.gateway_argv(config)
            env = docker_gateway.gateway_env(config)
        else:
            assert isinstance(config.command, str)  # the model turns a list into args
            command, args, env = config.command, config.args, config.env
        command, args = dies_with_us(command, args, env)
        # Spawned before the SDK loads (it takes 1.5 s): the server starts meanwhile.
        process = await spawn(command, args, env or None, config.cwd, errlog)
        if process is not None:
            stack.push_async_callback(_never_left, process)
            on_event("spawned", str(process.pid))
        if "mcp" not in sys.modules:  # off the loop: what else runs (a Ctrl-C) is not held
            await asyncio.to_thread(importlib.import_module, "mcp")
        from mcp import StdioServerParameters

        params = StdioServerParameters(command=command, args=args, env=env or None,
                                       cwd=config.cwd)
        return Watched(stdio_client(params, errlog=errlog, spawned=process), on_event)
    assert config.url is not None
    from tui_agent.tools.transports.http import http_client

    if config.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(config.url, headers=dict(config.headers) or None, auth=auth,
                          httpx_client_factory=http_client)
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(
        http_client(headers=dict(config.headers) or None, auth=auth))
    return streamable_http_client(config.url, http_client=http)


LAUNCH = ("import ctypes, os, sys\n"
          "ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)\n"  # PR_SET_PDEATHSIG, SIGKILL
          "os.getppid() == int(sys.argv[1]) or os._exit(1)\n"
          "os.execv(sys.argv[2], sys.argv[3:])")
"""Set the parent-death signal, then become the server: the signal outlives ``execv``."""


def dies_with_us(command: str, args: list[str], env: dict[str, str] | None
                 ) -> tuple[str, list[str]]:
    """``command args`` started so that the server is killed when tui-agent dies (on
    Linux, where a program cannot be made to by its parent; ~15 ms more to start). A
    command that cannot be found is left as it is, for the SDK to report."""
    if not sys.platform.startswith("linux"):
        return command, args
    if os.sep in command:
        target: str | None = command  # relative to the server's cwd, where it runs
    else:
        target = shutil.which(command, path=(env or {}).get("PATH") or os.environ.get("PATH"))
    if target is None:
        return command, args
    return sys.executable, ["-I", "-S", "-c", LAUNCH, str(os.getpid()), target, command, *args]
