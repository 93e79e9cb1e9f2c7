"""What running a tool as a task costs over a plain call, through the hub, against
tests/fakes/task_server.py over stdio: medians of N calls of ``quick`` (called as a task:
``tools/call`` answered by a task already completed, then ``tasks/result``) and ``plain``
(one ``tools/call``), interleaved. Then one ``research`` task of 1 s of work polled at
100 ms: the wall time past the work itself (what polling adds at the end).

    python -m tests.bench.bench_tasks [--calls 100]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tests.bench._common import ROOT, median, spread
from tests.conftest import TAG_VAR
from tui_agent.config.models import ServerConfig
from tui_agent.tools.hub import Hub

SERVER = str(ROOT / "tests" / "fakes" / "task_server.py")


async def main(calls: int) -> None:
    tag = uuid.uuid4().hex
    config = ServerConfig(command=sys.executable,
                          args=[SERVER, "--poll-ms", "100", "--step", "0.25"],
                          env={TAG_VAR: tag}, protocol="legacy")
    with tempfile.TemporaryDirectory() as logs:
        async with Hub({"t": config}, log_dir=Path(logs)) as hub:
            await hub.wait_all()
            specs = {s.tool: s for s in hub.specs()}
            took: dict[str, list[float]] = {"quick": [], "plain": []}
            for _ in range(calls):
                for name in took:
                    started = time.perf_counter()
                    outcome = await hub.call(specs[name], {})
                    took[name].append(time.perf_counter() - started)
                    assert not outcome.is_error, outcome.text
            for name, values in took.items():
                how = "as a task" if name == "quick" else "plain call"
                print(f"{name} ({how}): {spread(values, 1000)} ms")
            ratio = median(took["quick"]) / median(took["plain"])
            print(f"ratio task/plain (medians): {ratio:.2f}")
            started = time.perf_counter()
            outcome = await hub.call(specs["research"], {"topic": "owls", "steps": 4})
            wall = time.perf_counter() - started
            assert not outcome.is_error, outcome.text
            print(f"research task, 4 steps of 0.25 s polled every 0.1 s: {wall:.3f} s "
                  f"({(wall - 1.0) * 1000:.0f} ms past the work)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    asyncio.run(main(parser.parse_args().calls))
