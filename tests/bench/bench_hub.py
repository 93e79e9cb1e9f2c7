"""The hub's own costs, each against a baseline measured in the same run.

1. A tool call through the hub (catalog, policy-free routing, timeout scope,
   result rendering) against the SDK's raw ``call_tool`` to a second copy of the
   same stdio server: medians of N calls each, interleaved. Target: within 1.1x.
2. Ten servers that each take ~1 s to start, started together, against one
   alone: time until all are connected. Target: within 1.3x the one alone.
3. Closing ten servers, one of which ignores SIGTERM: wall time (target under
   5 s) and the processes left behind (target none).

    python -m tests.bench.bench_hub [--calls 200] [--servers 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tests.bench._common import ROOT, median, spread
from tests.conftest import TAG_VAR, tagged_processes
from tui_agent.config.models import ServerConfig
from tui_agent.tools.hub import Hub

TINY = str(ROOT / "tests" / "fakes" / "tiny_server.py")


def fake(tag: str) -> ServerConfig:
    return ServerConfig(command=sys.executable, args=["-m", "tests.fakes.mcp_server"],
                        cwd=str(ROOT), env={TAG_VAR: tag})


def tiny(tag: str, *args: str) -> ServerConfig:
    return ServerConfig(command=sys.executable, args=[TINY, *args], env={TAG_VAR: tag},
                        protocol="legacy")


async def call_overhead(calls: int, logs: Path, tag: str) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = fake(tag)
    assert isinstance(config.command, str)
    params = StdioServerParameters(command=config.command, args=config.args,
                                   env=config.env, cwd=config.cwd)
    with open(os.devnull, "w") as devnull:
        async with Client(stdio_client(params, errlog=devnull), cache=None) as raw, \
                Hub({"f": config}, log_dir=logs) as hub:
            await hub.wait_all()
            spec = next(s for s in hub.specs() if s.tool == "echo")
            ours: list[float] = []
            theirs: list[float] = []
            for i in range(calls + 10):  # the first 10 of each are warm-up
                start = time.perf_counter()
                await raw.call_tool("echo", {"text": f"x{i}"})
                middle = time.perf_counter()
                await hub.call(spec, {"text": f"x{i}"})
                end = time.perf_counter()
                if i >= 10:
                    theirs.append(middle - start)
                    ours.append(end - middle)
    print(f"call, raw SDK call_tool (ms):  {spread([t * 1000 for t in theirs])}")
    print(f"call, through the hub (ms):    {spread([t * 1000 for t in ours])}")
    print(f"call ratio hub/raw (medians):  {median(ours) / median(theirs):.2f}x "
          "(target <= 1.1x)")


async def time_to_connected(servers: dict[str, ServerConfig], logs: Path) -> float:
    start = time.monotonic()
    async with Hub(servers, log_dir=logs) as hub:
        await hub.wait_all()
        took = time.monotonic() - start
        assert all(s.state == "connected" for s in hub.statuses()), hub.statuses()
    return took


async def parallel_start(count: int, logs: Path, tag: str) -> None:
    await time_to_connected({"warm": tiny(tag)}, logs)  # imports the SDK once
    alone = await time_to_connected({"one": tiny(tag, "--slow-start", "1")}, logs)
    together = await time_to_connected(
        {f"s{i}": tiny(tag, "--slow-start", "1") for i in range(count)}, logs)
    print(f"start, one ~1 s server alone:  {alone:.2f} s")
    print(f"start, {count} together:           {together:.2f} s")
    print(f"start ratio {count}/one:            {together / alone:.2f}x (target <= 1.3x)")


async def shutdown(count: int, logs: Path, tag: str) -> None:
    servers = {f"s{i}": tiny(tag) for i in range(count - 1)}
    servers["stubborn"] = tiny(tag, "--ignore-sigterm")
    hub = Hub(servers, log_dir=logs)
    hub.start()
    await hub.wait_all()
    running = len(tagged_processes(tag))
    start = time.monotonic()
    await hub.close()
    took = time.monotonic() - start
    left = tagged_processes(tag)
    print(f"shutdown of {count} ({running} processes, one ignores SIGTERM): {took:.2f} s "
          f"(target < 5 s), {len(left)} left behind (target 0)")


async def main(calls: int, count: int) -> None:
    tag = uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        await call_overhead(calls, logs, tag)
        await parallel_start(count, logs, tag)
        await shutdown(count, logs, tag)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--servers", type=int, default=10)
    ns = parser.parse_args()
    asyncio.run(main(ns.calls, ns.servers))
