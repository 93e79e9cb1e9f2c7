"""A tool call through ``docker exec`` against the same server over plain stdio.

The same MCP server (tests/fakes/mcp_server.py) runs twice behind one hub: once
as a stdio child, once inside a hardened container of the test image
(tests/dockerkit.py) reached over docker exec. Calls of ``echo`` alternate
between the two; the figure is the ratio of the medians. Target: within 1.5x.
Also printed: the time from start to connected for each (the container's
includes creating and starting it).

    python -m tests.bench.bench_docker [--calls 100]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tests import dockerkit
from tests.bench._common import median, spread
from tests.bench.bench_hub import fake
from tests.conftest import TAG_VAR
from tui_agent.tools.connection import ServerStatus
from tui_agent.tools.hub import Hub


async def main(calls: int) -> int:
    client = dockerkit.engine()
    if client is None:
        print("no Docker engine: nothing measured")
        return 1
    dockerkit.ensure_image(client)
    tag = uuid.uuid4().hex
    plain = fake(tag)
    boxed = dockerkit.boxed(env={TAG_VAR: tag})
    with tempfile.TemporaryDirectory() as tmp:
        hub = Hub({"plain": plain, "boxed": boxed}, log_dir=Path(tmp))
        started = time.monotonic()
        ready: dict[str, float] = {}

        def connected(status: ServerStatus) -> None:
            if status.state == "connected":
                ready.setdefault(status.name, time.monotonic() - started)

        hub.subscribe(connected)
        hub.start()
        try:
            await hub.wait_all()
            specs = {s.name: s for s in hub.specs()}
            direct, docker = specs["plain__echo"], specs["boxed__echo"]
            stdio_times: list[float] = []
            exec_times: list[float] = []
            for i in range(calls + 10):  # the first 10 of each are warm-up
                t0 = time.perf_counter()
                a = await hub.call(direct, {"text": f"x{i}"})
                t1 = time.perf_counter()
                b = await hub.call(docker, {"text": f"x{i}"})
                t2 = time.perf_counter()
                assert not a.is_error and not b.is_error, (a, b)
                if i >= 10:
                    stdio_times.append(t1 - t0)
                    exec_times.append(t2 - t1)
        finally:
            await hub.close()
    print(f"start to connected: stdio {ready.get('plain', float('nan')):.2f} s, "
          f"docker exec (container created) {ready.get('boxed', float('nan')):.2f} s")
    print(f"call over stdio (ms):        {spread([t * 1000 for t in stdio_times])}")
    print(f"call over docker exec (ms):  {spread([t * 1000 for t in exec_times])}")
    print(f"call ratio docker/stdio (medians of {calls}): "
          f"{median(exec_times) / median(stdio_times):.2f}x (target <= 1.5x)")
    left = dockerkit.ours(client)
    print(f"containers left behind: {len(left)} (target 0)")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    ns = parser.parse_args()
    sys.exit(asyncio.run(main(ns.calls)))
