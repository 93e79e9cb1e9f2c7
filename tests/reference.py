"""Reference MCP servers nobody here wrote: where they are, and how to start them.

``mcp-server-time`` and ``mcp-server-git`` come from PyPI with the test extra.
``@modelcontextprotocol/server-everything`` and ``server-filesystem`` come from npm,
installed into ``tests/npm`` from its lock file the first time a test needs it.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import TAG_VAR, need
from tests.installs import npm_ci

NPM_DIR = Path(__file__).parent / "npm"
EVERYTHING = NPM_DIR / "node_modules" / ".bin" / "mcp-server-everything"
FILESYSTEM = NPM_DIR / "node_modules" / ".bin" / "mcp-server-filesystem"


def python_server(name: str) -> str:
    """The console script of a PyPI server installed beside our interpreter."""
    path = Path(sys.executable).parent / name
    need(path.exists(), f"{name} (pip install -e '.[test]')")
    return str(path)


def everything() -> str:
    """server-everything's executable, installing the npm servers on first use."""
    return _npm_server(EVERYTHING)


def filesystem() -> str:
    """server-filesystem's executable, installing the npm servers on first use."""
    return _npm_server(FILESYSTEM)


def _npm_server(exe: Path) -> str:
    return str(npm_ci(NPM_DIR, exe, timeout=300))


def free_port() -> int:
    """A port for a server a test starts, free now and kept from the others of this run:
    each pytest-xdist worker draws from its own block of ports below the kernel's
    ephemeral range (where no bind to port 0 and no outgoing connection lands), at
    random within it (a second run alongside seldom draws the same), and checks that
    nothing holds it. A port from bind(("", 0)), closed and handed on, could be taken
    meanwhile by another worker's bind or connect."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    block = 10_000 + (int(worker) if worker.isdigit() else 0) % 10 * PORT_BLOCK
    for port in random.sample(range(block, block + PORT_BLOCK), PORT_BLOCK):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {block}-{block + PORT_BLOCK - 1}")


PORT_BLOCK = 2_000
"""Ports per worker: workers gw0-gw9 draw from 10000-29999, below the kernel's ephemeral
range (32768 and up on Linux)."""


@contextmanager
def http_server(command: list[str], port: int, env: dict[str, str] | None = None,
                path: str = "/") -> Iterator[str]:
    """Run a server that listens on ``port``; yield its base URL once it accepts."""
    full_env = {**os.environ, **(env or {}), TAG_VAR: os.environ[TAG_VAR]}
    proc = subprocess.Popen(command, env=full_env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError as exc:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{command[0]} did not start listening on {port}") \
                        from exc
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)


START = 60
"""Seconds a reference server may take to start (``startup_timeout``): npx's and uvx's
servers load a runtime first, and with a second suite on the 2 CPUs a 10 s start ran out
(code mode's two-server test then found no time server). A bound, not a speed test."""
