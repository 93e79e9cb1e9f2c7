"""The built-in server's file tools, each against a baseline measured in the same run.

1. ``local__grep`` through the hub over a generated tree of ``--files`` files (default
   50,000, one in a hundred holding the needle) against ``rg`` run directly on it: medians
   of ``--rounds`` searches each, interleaved. Target: within 1.5x.
2. A ``local__read`` + ``local__edit`` round trip through the hub against a direct read
   and write of the same file by this Python process: medians of ``--calls`` each.
   Target: within 1.2x.

    python -m tests.bench.bench_builtin_files [--files 50000] [--rounds 5] [--calls 100]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tests.bench._common import median, spread
from tests.conftest import TAG_VAR
from tui_agent.config.builtin_server import builtin_server
from tui_agent.tools.hub import Hub
from tui_agent.tools.spec import ToolSpec

LINES = "".join(f"line {i} of some ordinary text, nothing to find here\n" for i in range(20))


def make_tree(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"d{i // 1000}" / f"e{(i // 100) % 10}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        text = LINES + ("the NEEDLE is here\n" if i % 100 == 7 else "")
        (folder / f"f{i}.txt").write_text(text)


async def measure(tree: Path, rounds: int, calls: int, logs: Path) -> None:
    config = builtin_server().model_copy(update={
        "args": [*builtin_server().args, "--root", str(tree)], "cwd": str(tree),
        "env": {TAG_VAR: uuid.uuid4().hex}, "timeout": 120, "startup_timeout": 60})
    async with Hub({"local": config}, log_dir=logs) as hub:
        await hub.wait_all()
        specs = {s.tool: s for s in hub.specs()}
        await grep_figures(hub, specs["grep"], tree, rounds)
        await round_trip_figures(hub, specs, tree, calls)


async def grep_figures(hub: Hub, grep: ToolSpec, tree: Path, rounds: int) -> None:
    rg = shutil.which("rg")
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds + 1):  # the first of each is warm-up (the page cache)
        start = time.perf_counter()
        outcome = await hub.call(grep, {"pattern": "NEEDLE", "path": str(tree)})
        ours.append(time.perf_counter() - start)
        assert not outcome.is_error, outcome.text
        if rg:
            start = time.perf_counter()
            subprocess.run([rg, "NEEDLE", str(tree)], capture_output=True, check=True)
            theirs.append(time.perf_counter() - start)
    print(f"grep over the tree through the hub: {spread(ours[1:], 1000)} ms")
    if not rg:
        print("rg is not installed: no baseline, no ratio (apt-get install ripgrep)")
        return
    print(f"rg run directly:                   {spread(theirs[1:], 1000)} ms")
    print(f"grep ratio hub/rg: {median(ours[1:]) / median(theirs[1:]):.2f}x (target <= 1.5x)")


async def round_trip_figures(hub: Hub, specs: dict[str, ToolSpec], tree: Path,
                             calls: int) -> None:
    target = tree / "edit-me.txt"
    target.write_text(LINES + "value = 0\n")
    ours: list[float] = []
    direct: list[float] = []
    for i in range(calls + 10):  # the first 10 of each are warm-up
        start = time.perf_counter()
        await hub.call(specs["read"], {"path": str(target)})
        done = await hub.call(specs["edit"], {"path": str(target), "old_string": f"value = {i}",
                                              "new_string": f"value = {i + 1}"})
        ours.append(time.perf_counter() - start)
        assert not done.is_error, done.text
        start = time.perf_counter()
        text = target.read_text()
        target.write_text(text)
        direct.append(time.perf_counter() - start)
    print(f"read + edit through the hub:  {spread(ours[10:], 1000)} ms")
    print(f"direct read + write:          {spread(direct[10:], 1000)} ms")
    print(f"round trip ratio hub/direct: {median(ours[10:]) / median(direct[10:]):.1f}x "
          "(target <= 1.2x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        tree = Path(temp) / "tree"
        started = time.perf_counter()
        make_tree(tree, args.files)
        print(f"{args.files} files generated in {time.perf_counter() - started:.1f} s "
              f"(python {sys.version.split()[0]})")
        asyncio.run(measure(tree, args.rounds, args.calls, Path(temp) / "logs"))


if __name__ == "__main__":
    main()
