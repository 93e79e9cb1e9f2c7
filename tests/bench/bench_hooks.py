"""What a ``PreToolUse`` command hook adds to a tool call, beyond the hook's own run.

Three things are timed, alternating, in the same run: a call's way through the hooks with
no hook configured (:meth:`~tui_agent.core.agent.hooked.Hooked.pre_tool`), the same with
one ``PreToolUse`` hook that exits at once (``true``), and that hook's process alone
(``/bin/sh -c true`` started with pipes, the input written, its output read, reaped: what
any runner must pay). The figure is (call with hook) - (call without) - (hook alone), of
the medians. Target: at most 5 ms.

    python -m tests.bench.bench_hooks [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from tests.bench._common import median, spread
from tui_agent.core.agent.hooked import Hooked
from tui_agent.core.hooks import Hooks
from tui_agent.core.permissions import Policy
from tui_agent.custom.hooks import HookCommand, HookConfig, HookGroup
from tui_agent.tools.spec import ToolSpec

SPEC = ToolSpec("fs__read_file", "fs", "read_file")
ARGUMENTS = {"path": "/tmp/notes.md"}


class Caller(Hooked):
    """The hook half of an agent, alone."""

    def __init__(self, hooks: Hooks | None) -> None:
        self.hooks, self.policy, self.session = hooks, Policy(), None
        self.conversation_id, self.halted, self._background = "bench", None, set()


async def through(caller: Caller) -> float:
    started = time.perf_counter()
    await caller.pre_tool(SPEC, "c1", ARGUMENTS, lambda _event: None)
    return time.perf_counter() - started


async def alone(cwd: Path) -> float:
    """The hook's process as any runner starts it, with the same input."""
    data = json.dumps({"hook_event_name": "PreToolUse", "tool_input": ARGUMENTS}).encode()
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", "true", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=cwd,
        start_new_session=True)
    await proc.communicate(data)
    return time.perf_counter() - started


async def main(runs: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        group = HookGroup("PreToolUse", "", (HookCommand("true"),))
        hooked = Caller(Hooks(HookConfig((group,)), cwd=cwd, project_dir=cwd))
        bare = Caller(None)
        with_hook: list[float] = []
        without: list[float] = []
        process: list[float] = []
        for _ in range(5):  # warm up
            await through(hooked)
            await alone(cwd)
        for _ in range(runs):
            with_hook.append(await through(hooked))
            without.append(await through(bare))
            process.append(await alone(cwd))
    added = median(with_hook) - median(without) - median(process)
    print(f"PreToolUse hook `true`, {runs} calls (min / median / max, ms):")
    print(f"  call with the hook   {spread(with_hook, 1000)}")
    print(f"  call without hooks   {spread(without, 1000)}")
    print(f"  the hook alone       {spread(process, 1000)}")
    print(f"  added by tui-agent   {added * 1000:.2f} ms (target: at most 5 ms"
          f"{'' if added <= 0.005 else ': OVER'})")
    return 0  # a figure, not a verdict: the suite only checks that it runs


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    sys.exit(asyncio.run(main(parser.parse_args().runs)))
