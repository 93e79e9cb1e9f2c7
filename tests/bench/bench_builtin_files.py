"""The built-in server's file tools, each against a baseline measured in the same run.

1. ``local__grep`` through the hub over a generated tree of ``--files`` files (default
   50,000, one in a hundred holding the needle) against ``rg`` run directly on it: medians
   of ``--rounds`` searches each, interleaved. Target: within 1.5x.
2. A ``local__read`` + ``local__edit`` round trip through the hub against a direct read
   and write of the same file by this Python process: medians of ``--calls`` each.
   Target: within 1.2x. Beside it, interleaved, the same round trip taken apart
   (:mod:`tests.bench._builtin_round_trip`): a ``noop`` tool through the same hub (the
   floor), the hub over the SDK's memory transport with the server in this process (a
   prototype), the SDK's client alone, the tool functions called directly with and
   without the checkpoint, and a second baseline that does what the edit must do for
   safety (a checkpoint copy and an fsynced journal line, an fsynced temp + rename);
   then the checkpoint's steps and what a full journal costs a keep.

    python -m tests.bench.bench_builtin_files [--files 50000] [--rounds 5] [--calls 100]
        [--profile N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tests.bench._builtin_round_trip import profile, round_trip_figures
from tests.bench._builtin_seams import IN_MEMORY, in_memory
from tests.bench._common import ROOT, median, spread
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


async def measure(tree: Path, args: argparse.Namespace, logs: Path) -> None:
    env = {TAG_VAR: uuid.uuid4().hex, "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"]}
    config = builtin_server().model_copy(update={
        "args": [*builtin_server().args, "--root", str(tree)], "cwd": str(tree),
        "env": env, "timeout": 120, "startup_timeout": 60})
    seams = config.model_copy(update={
        "args": ["-m", "tests.bench._builtin_seams", "--root", str(tree)],
        "env": {**env, "PYTHONPATH": str(ROOT)}})
    memory = config.model_copy(update={"command": IN_MEMORY, "args": []})
    servers = {"local": config, "seams": seams, "memory": memory}
    with in_memory(tree):
        async with Hub(servers, log_dir=logs) as hub:
            await hub.wait_all()
            specs = {(s.server, s.tool): s for s in hub.specs()}
            if args.files:
                await grep_figures(hub, specs["local", "grep"], tree, args.rounds)
            await round_trip_figures(hub, specs, tree, args.calls)
            if args.profile:
                await profile(hub, specs, tree, args.profile)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also profile N round trips through the hub in memory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        os.environ["XDG_DATA_HOME"] = str(Path(temp) / "data")  # the checkpoints' store
        tree = Path(temp) / "tree"
        tree.mkdir()
        started = time.perf_counter()
        make_tree(tree, args.files)
        print(f"{args.files} files generated in {time.perf_counter() - started:.1f} s "
              f"(python {sys.version.split()[0]}; --files 0: no grep figures)")
        os.chdir(tree)  # the in-process server keeps its checkpoints by its folder
        asyncio.run(measure(tree, args, Path(temp) / "logs"))


if __name__ == "__main__":
    main()
