"""``sandbox = "docker"``: each command in a new container of ``[tools.shell] image``,
``sh -c`` in the working directory, the workspace's roots mounted read-write at their own
paths (and ``volumes`` as given), no network unless ``network = true``, a process ceiling
(``pids_limit``), all capabilities dropped, run as the user's own uid and gid (files it
makes in the project are theirs, and ``/rewind`` can restore them), removed when it ends
or at its timeout.

The ``docker`` package is imported here only, at the first command; its calls block, so
they run in a worker thread. Containers carry the label ``io.tui-agent.managed`` (as the
``docker`` transport's do) and ``io.tui-agent.shell`` with this server's pid, and the
server removes its own at exit (killing the docker client does not stop a container)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from tui_agent.builtin.shell.output import Capture
from tui_agent.config.shell_settings import ShellSettings

LABEL = "io.tui-agent.managed"
LABEL_SHELL = "io.tui-agent.shell"


class DockerProblem(Exception):
    """The engine or the image failed; the message is one line for the model and user."""


def _volumes(roots: Sequence[Path], extra: Sequence[str]) -> dict[str, dict[str, str]]:
    found = {str(root): {"bind": str(root), "mode": "rw"} for root in roots}
    for volume in extra:
        source, target, *mode = volume.split(":")
        found[os.path.expanduser(source)] = {"bind": target, "mode": mode[0] if mode else "rw"}
    return found


def _client() -> Any:
    try:
        import docker

        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as exc:
        raise DockerProblem(f"sandbox \"docker\": cannot reach the Docker engine ({exc}); "
                            "start it, or set [tools.shell] sandbox to \"bwrap\"") from None
    return client


def _run(command: str, cwd: Path, roots: Sequence[Path], env: Mapping[str, str],
         settings: ShellSettings, timeout: float) -> tuple[str, int | None]:
    """Blocking: the command's output (capped) and exit code (None: timed out)."""
    client = _client()
    try:
        container = client.containers.run(
            settings.image, ["/bin/sh", "-c", command], detach=True, working_dir=str(cwd),
            volumes=_volumes(roots, settings.volumes), environment=dict(env),
            network_mode=None if settings.network else "none",
            pids_limit=settings.max_processes, cap_drop=["ALL"],
            user=f"{os.getuid()}:{os.getgid()}",
            security_opt=["no-new-privileges"], stdin_open=False, tty=False,
            labels={LABEL: "1", LABEL_SHELL: str(os.getpid())})
    except Exception as exc:
        raise DockerProblem(f"sandbox \"docker\": could not start a container of "
                            f"'{settings.image}': {exc}") from None
    try:
        try:
            code: int | None = container.wait(timeout=timeout)["StatusCode"]
        except Exception:  # the client's read timeout: the command is still running
            code = None
            with contextlib.suppress(Exception):
                container.kill()
        capture = Capture(settings.max_output)
        with contextlib.suppress(Exception):
            for chunk in container.logs(stdout=True, stderr=True, stream=True):
                capture.feed(chunk)
        return capture.text(), code
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True)


async def run(command: str, cwd: Path, roots: Sequence[Path], env: Mapping[str, str],
              settings: ShellSettings, timeout: float) -> tuple[str, int | None]:
    return await anyio.to_thread.run_sync(
        lambda: _run(command, cwd, roots, env, settings, timeout), abandon_on_cancel=True)


def remove_ours() -> None:
    """Remove every container this server started that is still there (at its exit)."""
    with contextlib.suppress(Exception):
        import docker

        client = docker.from_env(timeout=10)
        for container in client.containers.list(
                all=True, filters={"label": f"{LABEL_SHELL}={os.getpid()}"}):
            with contextlib.suppress(Exception):
                container.remove(force=True)
