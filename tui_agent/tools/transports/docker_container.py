"""Where one ``docker`` server runs: a container we create from ``image`` (labelled,
hardened, removed when the server stops) or the user's existing ``container``, and the
reasons a server in it ended. The server itself is an interactive exec in the container
(:mod:`.docker_exec`); every other engine call goes through the ``docker`` package, in a
thread.
"""


from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

from tui_agent.config.models import ServerConfig, check_volume
from tui_agent.tools.text import clean
from tui_agent.tools.transports.docker_engine import (
    ENGINE_TIMEOUT,
    LABEL,
    LABEL_OWNER,
    LABEL_SERVER,
    DockerFailure,
    connect_engine,
    engine_error,
    engine_host,
    owner_label,
    reap_once,
    short_error,
)
from tui_agent.tools.transports.docker_exec import OnEvent, exec_streams, start_exec

TMPFS = {"/tmp": "rw,nosuid,nodev,size=64m"}


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
            raise DockerFailure(f"Docker refused: {short_error(exc)}") from None
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
            return short_error(exc)
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
                                f"{short_error(exc)}") from None
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
            raise DockerFailure(f"the container did not start: {short_error(exc)}") from None
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
            raise DockerFailure(f"docker exec refused: {short_error(exc)}") from None
        except Exception as exc:
            raise DockerFailure(engine_error(exc, self.host)) from None
        self._execs += 1
        return str(made["Id"])

    def _stopped_before_start(self) -> str | None:
        """Why an exec could not start, when it is that the container stopped first."""
        try:
            status = self._client.containers.get(self.id).status
        except Exception:
            return f"container '{self.name}' is gone"
        if status == "running":
            return None
        self._execs -= 1  # that exec never ran
        return self._not_running()

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
        try:
            reader, writer = await start_exec(self.host, self._client.api._version, exec_id)
        except DockerFailure:
            # The container can stop between the exec's creation and its start: say how.
            stopped = await asyncio.to_thread(self._stopped_before_start)
            if stopped is not None:
                raise DockerFailure(stopped) from None
            raise
        async with exec_streams(reader, writer, errlog,
                            lambda noise, answered: asyncio.to_thread(
                                self.why_ended, exec_id, noise, answered),
                            on_event) as streams:
            yield streams


def _remove(client: Any, cid: str) -> None:
    with contextlib.suppress(Exception):
        client.containers.get(cid).remove(force=True)


def _name_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-" else "-" for c in name)[:40] or "server"
