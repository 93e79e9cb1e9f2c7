"""Docker's MCP gateway (``docker mcp gateway run``) as one server over stdio.

The gateway is Docker's CLI plugin ``docker-mcp``: one process that fronts a
whole catalog of containerised servers. Before it starts, two quick checks
(3 s each) tell a missing plugin from a missing engine, so the message says
which to fix. It starts lazily and stops when idle (see ``ServerConfig.lazy``
and ``idle_timeout``); the connection handles both.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from tui_agent.config.models import ServerConfig
from tui_agent.tools.text import clean
from tui_agent.tools.transports.docker_engine import DockerFailure

DETECT_TIMEOUT = 3.0
PASSED_ENV = ("DOCKER_CONFIG", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CERT_PATH",
              "DOCKER_TLS_VERIFY")
"""What the docker CLI needs to find its plugins and its engine, passed to the gateway."""


def gateway_env(config: ServerConfig) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    if config.docker_host:
        env["DOCKER_HOST"] = config.docker_host
    return {**env, **config.env}


def gateway_argv(config: ServerConfig) -> list[str]:
    return ["docker", "mcp", "gateway", "run", "--transport", "stdio", *config.args]


async def _run(argv: list[str], env: dict[str, str]) -> tuple[int | None, str]:
    """Exit code (None on timeout) and the output, cleaned."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, env={**os.environ, **env},
            start_new_session=True)
    except FileNotFoundError:
        return 127, f"{argv[0]}: command not found"
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), DETECT_TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return None, ""
    return proc.returncode, clean(out.decode("utf-8", "replace")).strip()


def _last_line(text: str) -> str:
    return (text.splitlines() or [""])[-1][:200]


async def detect(config: ServerConfig) -> None:
    """Raise DockerFailure unless the docker CLI, its ``mcp`` plugin and an engine answer.
    Without the plugin ``docker mcp --help`` still exits 0 (it prints the docker CLI's own
    help), so the usage line must name ``docker mcp``."""
    env = gateway_env(config)
    (plugin, plugin_out), (engine, engine_out) = await asyncio.gather(
        _run(["docker", "mcp", "--help"], env),
        _run(["docker", "info", "--format", "{{.ServerVersion}}"], env))
    if plugin == 127 and "command not found" in plugin_out:
        raise DockerFailure("the docker CLI is not installed (no 'docker' on PATH)")
    usage = next((ln for ln in plugin_out.splitlines() if ln.startswith("Usage:")), "")
    if plugin != 0 or "docker mcp" not in usage:
        why = "timed out" if plugin is None else "the CLI has no 'mcp' command"
        raise DockerFailure(f"Docker's MCP gateway is not available ({why}): install Docker "
                            "Desktop's MCP Toolkit or the docker-mcp CLI plugin")
    if engine != 0:
        why = "no answer in 3 s" if engine is None else (_last_line(engine_out)
                                                       or f"exit code {engine}")
        raise DockerFailure(f"Docker's MCP gateway needs a running Docker engine: {why}")
