"""The Docker engine, for the ``docker`` and ``docker-gateway`` transports: which engine
(``docker_host``, ``$DOCKER_HOST``, the local socket), connecting to it with an error a
person can act on, and the labels that mark our containers with their owner.

Containers are labelled with their owner (host, pid and the pid's start time).
A crash can leave one behind (killing a process never removes its container),
so the first docker server of each run removes every container whose owner on
this host is gone (:func:`reap_once`).
"""


from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Any

from tui_agent.config.models import ServerConfig
from tui_agent.tools.text import clean

LABEL = "io.tui-agent.managed"
LABEL_SERVER = "io.tui-agent.server"
LABEL_OWNER = "io.tui-agent.owner"
"""``<hostname>:<pid>:<start time of the pid>``; a container whose owner is gone is an orphan."""
DEFAULT_HOST = "unix:///var/run/docker.sock"
ENGINE_TIMEOUT = 30.0
_reaped: set[str] = set()


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
    return f"cannot use the Docker engine at {host}: {short_error(exc)}"


def short_error(exc: BaseException) -> str:
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


