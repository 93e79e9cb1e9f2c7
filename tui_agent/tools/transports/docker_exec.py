"""MCP servers inside Docker containers, reached over ``docker exec``.

A ``docker`` server runs in a container: one we create from ``image`` (labelled,
hardened, removed when the server stops) or an existing ``container``. The
server itself is an interactive exec in it (stdin attached, no TTY, so the
JSON-RPC bytes are never rewritten). The exec's output arrives in Docker's
multiplexed frames: an 8-byte header (stream 1 stdout or 2 stderr, then a
big-endian length) before each chunk; frames do not follow lines, so stdout is
buffered and split into lines here, and stderr goes to the server's log file.
:func:`exec_client` hands the MCP SDK the same pair of memory streams its own
stdio transport gives it.

The exec is started by speaking the engine's HTTP API on an asyncio
connection (``POST /exec/{id}/start`` with ``Upgrade: tcp``), so no byte that
follows the response headers can be lost to a blocking client's buffer. Every
other engine call goes through the ``docker`` package, in a thread.

Containers are labelled with their owner (host, pid and the pid's start time).
A crash can leave one behind (killing a process never removes its container),
so the first docker server of each run removes every container whose owner on
this host is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import struct
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlparse

from tui_agent.config.models import ServerConfig, check_volume
from tui_agent.tools.text import clean

LABEL = "io.tui-agent.managed"
LABEL_SERVER = "io.tui-agent.server"
LABEL_OWNER = "io.tui-agent.owner"
"""``<hostname>:<pid>:<start time of the pid>``; a container whose owner is gone is an orphan."""
DEFAULT_HOST = "unix:///var/run/docker.sock"
STOP_GRACE = 2.0
"""Seconds a server gets to exit after its stdin closes before the connection is dropped."""
TMPFS = {"/tmp": "rw,nosuid,nodev,size=64m"}
ENGINE_TIMEOUT = 30.0
_reaped: set[str] = set()

OnEvent = Callable[[str, str], None]


class DockerFailure(Exception):
    """A docker step that failed; the message is one line for the user."""

    plain = True


# -- the engine -------------------------------------------------------------------


def engine_host(config: ServerConfig) -> str:
    return config.docker_host or os.environ.get("DOCKER_HOST") or DEFAULT_HOST


def connect_engine(config: ServerConfig, timeout: float = ENGINE_TIMEOUT) -> Any:
    """A ``docker.DockerClient`` for the server's engine (blocking). Raises DockerFailure."""
    import docker

    host = engine_host(config)
    try:
        client = docker.DockerClient(base_url=host, version="auto", timeout=int(max(1, timeout)))
    except Exception as exc:
        raise DockerFailure(engine_error(exc, host)) from None
    return client


def engine_error(exc: BaseException, host: str) -> str:
    """One line for a failure to reach the engine at ``host``."""
    text = f"{exc!r} {exc}"
    path = host.removeprefix("unix://")
    if "PermissionError" in text or "Permission denied" in text:
        return (f"permission denied on the Docker socket {path}: add your user to the "
                "'docker' group (and log in again), or set docker_host")
    if "FileNotFoundError" in text or "No such file" in text:
        return (f"no Docker engine at {host} (the socket does not exist): start Docker "
                "(dockerd), or set docker_host")
    if "Connection refused" in text or "ConnectionRefused" in text:
        return f"no Docker engine answering at {host} (connection refused): start Docker"
    if "timed out" in text.lower():
        return f"the Docker engine at {host} did not answer in time"
    return f"cannot use the Docker engine at {host}: {_short(exc)}"


def _short(exc: BaseException) -> str:
    explanation = getattr(exc, "explanation", None)
    text = explanation if isinstance(explanation, str) and explanation else str(exc)
    return clean(text.strip().splitlines()[0] if text.strip() else type(exc).__name__)[:300]


# -- ownership and orphans --------------------------------------------------------


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(") ", 1)[-1].split()[19]


def owner_label(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or '?'}"


def owner_alive(owner: str) -> bool:
    """Whether the tui-agent that labelled a container ``owner`` still runs. Owners on
    other hosts (a shared engine) count as alive: only their own host can tell."""
    host, _, rest = owner.partition(":")
    pid_text, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    now = _start_time(pid)
    if now is None:
        if Path("/proc/self/stat").exists():
            return False  # no such process
        try:  # no /proc (macOS): whether the pid exists is all there is to know
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return started in ("?", now)


def reap_orphans(client: Any) -> list[str]:
    """Remove our containers whose owner is gone (blocking); their names. The listing
    is one call (no inspect per container), since another tui-agent may be removing
    the same orphans at the same moment."""
    removed = []
    for entry in client.api.containers(all=True, filters={"label": LABEL}):
        if owner_alive((entry.get("Labels") or {}).get(LABEL_OWNER, "")):
            continue
        with contextlib.suppress(Exception):
            client.api.remove_container(entry["Id"], force=True)
            removed.append(((entry.get("Names") or ["?"])[0]).lstrip("/"))
    return removed


def reap_once(client: Any, host: str) -> list[str]:
    """:func:`reap_orphans`, once per engine per run."""
    if host in _reaped:
        return []
    _reaped.add(host)
    return reap_orphans(client)


# -- the container ----------------------------------------------------------------


class Container:
    """Where one docker server runs: a container we create, or the user's own."""

    def __init__(self, server: str, config: ServerConfig, *, note: Callable[[str], None],
                 timeout: float = ENGINE_TIMEOUT) -> None:
        self.server, self.config = server, config
        self.host = engine_host(config)
        self.ours = config.image is not None
        self.id: str | None = None
        self.name = config.container or ""
        self.command: list[str] = []
        self._note = note
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()
        self._execs = 0  # execs started in this container
        self._closed = False  # set by close(); a creation still under way then undoes itself

    async def open(self) -> None:
        await asyncio.to_thread(self._open)

    def _open(self) -> None:
        import docker.errors

        self._client = connect_engine(self.config, self._timeout)
        try:
            self._client.ping()
        except Exception as exc:
            raise DockerFailure(engine_error(exc, self.host)) from None
        try:
            for name in reap_once(self._client, self.host):
                self._note(f"removed {name}, left behind by a tui-agent that is gone")
            if self.ours:
                self._create()
            else:
                self._existing()
        except DockerFailure:
            raise
        except docker.errors.DockerException as exc:
            raise DockerFailure(f"Docker refused: {_short(exc)}") from None
        except Exception as exc:  # requests' connection errors, mostly
            raise DockerFailure(engine_error(exc, self.host)) from None

    def _existing(self) -> None:
        import docker.errors

        try:
            container = self._client.containers.get(self.config.container)
        except docker.errors.NotFound:
            raise DockerFailure(f"container '{self.config.container}' does not exist") from None
        status = container.status
        if status != "running":
            raise DockerFailure(f"container '{self.config.container}' is not running "
                                f"({status})")
        self.id, self.name = container.id, container.name
        self.command = self.config.exec_command or []

    def _image(self) -> Any:
        import docker.errors

        image = self.config.image
        assert image is not None
        pull = self.config.pull
        pulled: str | None = None
        if pull == "always":
            pulled = self._pull(image)
        try:
            found = self._client.images.get(image)
        except docker.errors.ImageNotFound:
            pass
        else:
            if pulled:
                self._note(f"could not pull {image} ({pulled}); using the local copy")
            return found
        if pull == "never":
            raise DockerFailure(f"image '{image}' is not on this engine (pull = \"never\"): "
                                f"build or load it first")
        if pulled is None:
            pulled = self._pull(image)
            if not pulled:
                return self._client.images.get(image)
        raise DockerFailure(f"image '{image}' is not on this engine and could not be pulled: "
                            f"{pulled}")

    def _pull(self, image: str) -> str:
        """Pull ``image`` (``name``, ``name:tag`` or ``name@digest``; a bare name means
        ``latest``); '' when it worked, else why not."""
        try:
            self._client.images.pull(image)
        except Exception as exc:
            return _short(exc)
        return ""

    def _create(self) -> None:
        import docker.errors

        config = self.config
        image = self._image()
        # Like `docker run IMAGE [ARGS]`: args replace the image's command, not its entrypoint.
        settings = image.attrs.get("Config", {})
        self.command = config.exec_command or [*(settings.get("Entrypoint") or []),
                                               *(config.args or settings.get("Cmd") or [])]
        if not self.command:
            raise DockerFailure(f"image '{config.image}' has no entrypoint or command: set "
                                "'command' to what starts the MCP server")
        volumes = [os.path.expanduser(v) for v in config.volumes]
        for volume in volumes:
            try:
                check_volume(volume)
            except ValueError as exc:
                raise DockerFailure(str(exc)) from None
        name = f"tui-agent-{_name_safe(self.server)}-{uuid.uuid4().hex[:8]}"
        try:
            container = self._client.containers.create(
                image.id, entrypoint=config.keep_alive[:1], command=config.keep_alive[1:],
                name=name, labels={LABEL: "1", LABEL_SERVER: self.server,
                                   LABEL_OWNER: owner_label()},
                detach=True, stdin_open=False, tty=False, init=True,
                network_mode=config.network, read_only=config.read_only,
                tmpfs=dict(TMPFS) if config.read_only else None,
                cap_drop=["ALL"], security_opt=["no-new-privileges"],
                mem_limit=config.memory, nano_cpus=int(config.cpus * 1e9),
                pids_limit=config.pids_limit, user=config.user or "",
                working_dir=config.workdir, volumes=volumes or None)
        except docker.errors.APIError as exc:
            raise DockerFailure(f"could not create a container from '{config.image}': "
                                f"{_short(exc)}") from None
        with self._lock:
            undo = self._closed
            if not undo:
                self.id, self.name = container.id, name
        if undo:  # the server was stopped (a start-up timeout) while this was created
            _remove(self._client, container.id)
            raise DockerFailure("stopped while the container was being created")
        try:
            container.start()
        except docker.errors.APIError as exc:
            raise DockerFailure(f"the container did not start: {_short(exc)}") from None
        container.reload()
        if container.status != "running":
            raise DockerFailure(self._exited(container, "exited at start"))

    def _exited(self, container: Any, what: str) -> str:
        """``the container <what> (exit code N)``, and the last line it wrote."""
        state = container.attrs.get("State", {})
        logs = ""
        with contextlib.suppress(Exception):
            logs = clean(container.logs(tail=5).decode("utf-8", "replace")).strip()
        oom = ", out of memory" if state.get("OOMKilled") else ""
        why = f": {logs.splitlines()[-1][:200]}" if logs else ""
        return f"the container {what} (exit code {state.get('ExitCode', '?')}{oom}){why}"

    def why_ended(self, exec_id: str | None, noise: str = "", answered: bool = True) -> str:
        """Why an exec's stream ended: the container's fate, or the exec's exit code
        (blocking). The stream can end before the engine has recorded either, so this
        looks again for up to a second. ``noise`` is the last line of output that was
        not JSON-RPC (the engine's own complaint when it could not start the command);
        ``answered``: the server had said something before."""
        import docker.errors

        code: int | None = None
        for attempt in range(6):
            if attempt:
                time.sleep(0.2)
            try:
                container = self._client.containers.get(self.id)
            except docker.errors.NotFound:
                return "the container is gone"
            except Exception as exc:
                return engine_error(exc, self.host)
            if container.status != "running":
                return self._exited(container, "stopped" if answered else "exited at start")
            if exec_id is None:
                break
            with contextlib.suppress(Exception):
                state = self._client.api.exec_inspect(exec_id)
                code = None if state.get("Running") else state.get("ExitCode")
            if code in (126, 127):
                said = f": {noise}" if "OCI runtime" in noise else ""
                return (f"docker exec refused to run {self.command[0]!r} (exit code {code}: "
                        f"not found or not executable in the container){said}")
            if code is not None and code not in (137, 143):
                break  # killed (137, 143): the container may be on its way down too
        return f"the server exited (exit code {code})" if code is not None \
            else "the server exited"

    def _exec_create(self, command: list[str]) -> str:
        import docker.errors

        config = self.config
        try:
            made = self._client.api.exec_create(
                self.id, command, stdin=True, stdout=True, stderr=True, tty=False,
                environment=dict(config.env) or None, workdir=config.workdir,
                user=config.user or "")
        except docker.errors.NotFound:
            raise DockerFailure(f"container '{self.name}' is gone") from None
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # it stopped: say how, with its last words
                raise DockerFailure(self._not_running()) from None
            raise DockerFailure(f"docker exec refused: {_short(exc)}") from None
        except Exception as exc:
            raise DockerFailure(engine_error(exc, self.host)) from None
        self._execs += 1
        return str(made["Id"])

    def _not_running(self) -> str:
        try:
            container = self._client.containers.get(self.id)
        except Exception:
            return f"container '{self.name}' is gone"
        if not self.ours:
            return f"container '{self.name}' is not running ({container.status})"
        # The first exec is the server's start; a container that stops before it exited
        # at start (its keep_alive command ended at once).
        return self._exited(container, "stopped" if self._execs else "exited at start")

    async def close(self) -> None:
        """Remove the container if it is ours (its processes die with it). A creation
        still running in its thread removes what it made itself."""
        import anyio

        with self._lock:
            self._closed = True
            cid, self.id = self.id, None
        if not self.ours or self._client is None or cid is None:
            return
        with anyio.CancelScope(shield=True):  # also when the start-up was cancelled
            await asyncio.to_thread(_remove, self._client, cid)

    @asynccontextmanager
    async def exec_client(self, errlog: TextIO | None,
                          on_event: OnEvent) -> AsyncIterator[tuple[Any, Any]]:
        """One interactive exec of the server's command, as the SDK's (read, write) streams."""
        exec_id = await asyncio.to_thread(self._exec_create, self.command)
        reader, writer = await _start_exec(self.host, self._client.api._version, exec_id)
        async with _streams(reader, writer, errlog,
                            lambda noise, answered: asyncio.to_thread(
                                self.why_ended, exec_id, noise, answered),
                            on_event) as streams:
            yield streams


def _remove(client: Any, cid: str) -> None:
    with contextlib.suppress(Exception):
        client.containers.get(cid).remove(force=True)


def _name_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-" else "-" for c in name)[:40] or "server"


# -- the exec stream --------------------------------------------------------------


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


async def _start_exec(host: str, version: str,
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
async def _streams(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
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
