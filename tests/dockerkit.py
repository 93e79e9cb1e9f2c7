"""A real Docker engine for the tests, and an image that runs our fake MCP server.

No registry is reachable here, so the image is an empty one made with ``docker
import``; a container of it runs the host's Python with the host's ``/usr``,
``/lib``, ``/lib64``, ``/bin``, the Python installation and this checkout
bind-mounted read-only (FACTS.md).
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import sys
import tarfile
from pathlib import Path
from typing import Any

from tui_agent.config.models import ServerConfig
from tui_agent.tools.transports.docker_engine import LABEL, LABEL_OWNER

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "tui-agent-test/hostmount:latest"


def engine() -> Any | None:
    """A client of the local engine, or None when there is none."""
    try:
        import docker

        client = docker.from_env(timeout=30)
        client.ping()
    except Exception:
        return None
    return client


def ensure_image(client: Any) -> str:
    """The empty test image (imported once per engine)."""
    import docker.errors

    try:
        client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w"):
            pass
        repository, tag = IMAGE.split(":")
        client.api.import_image_from_data(buffer.getvalue(), repository=repository, tag=tag)
    return IMAGE


def mounts() -> list[str]:
    """What the container needs to run this Python and this checkout, read-only."""
    wanted = ["/usr", "/lib", "/lib64", "/bin", sys.base_prefix, sys.prefix, str(ROOT)]
    seen: list[str] = []
    for path in wanted:
        if os.path.exists(path) and path not in seen:
            seen.append(path)
    return [f"{p}:{p}:ro" for p in seen]


def boxed(*args: str, **config: Any) -> ServerConfig:
    """Our fake MCP server (tests/fakes/mcp_server.py) in a hardened container of the image."""
    from tests.conftest import tagged_env

    given = config.pop("env", None)  # default: the current test's tag
    env = {"PYTHONDONTWRITEBYTECODE": "1", **(tagged_env() if given is None else given)}
    values: dict[str, Any] = {
        "image": IMAGE, "command": [sys.executable, "-m", "tests.fakes.mcp_server", *args],
        "workdir": str(ROOT), "volumes": [*mounts(), *config.pop("volumes", [])],
        "user": "65534:65534", "pull": "never", "env": env,
        # A container's start and the server's imports in it can take past the default
        # 10 s with three suites on these 2 CPUs (a boxed server was once missing).
        "startup_timeout": 60}
    values.update(config)
    return ServerConfig(**values)


def ours(client: Any, owner_pid: int | None = None) -> list[Any]:
    """Containers labelled by tui-agent running as ``owner_pid`` (default: this process)."""
    import docker.errors

    prefix = f"{socket.gethostname()}:{owner_pid or os.getpid()}:"
    found = []
    # One listing call: containers of other owners may be removed meanwhile (a reaping).
    for entry in client.api.containers(all=True, filters={"label": LABEL}):
        if (entry.get("Labels") or {}).get(LABEL_OWNER, "").startswith(prefix):
            with contextlib.suppress(docker.errors.NotFound):
                found.append(client.containers.get(entry["Id"]))
    return found
