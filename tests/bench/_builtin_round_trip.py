"""The read + edit round trip of :mod:`tests.bench.bench_builtin_files`, taken apart.

Each way of doing it edits a file of its own, one round trip each in turn (interleaved,
so a busy machine slows them alike); medians of ``calls`` after 10 of warm-up:

- through the hub to the server as shipped (stdio, its own process): the figure;
- a ``noop`` tool through the same hub to the same server code on stdio: the floor of a
  call (two of them are a round trip's floor);
- through the hub to the server in this process over the SDK's memory transport (a
  prototype), and ``noop`` that way;
- the SDK's client alone over the memory transport (no hub), and ``noop`` that way;
- the tool functions called directly, with the checkpoint and without;
- a direct read + write (the issue's baseline), and the safe one (a checkpoint copy and
  an fsynced journal line, an fsynced temp + rename: what an edit must do for safety).

Then the checkpoint's steps (means of the in-process keeps), and what a keep costs with
the store's journal full (5,000 lines: each keep reads it twice)."""

from __future__ import annotations

import cProfile
import io
import pstats
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from tests.bench._builtin_seams import (
    checkpoint_seams,
    file_server,
    safe_read_write,
)
from tests.bench._common import median, spread
from tui_agent.builtin.checkpoints import Checkpoints, journal
from tui_agent.builtin.checkpoints.journal import Line
from tui_agent.builtin.files.edit import edit_file
from tui_agent.builtin.files.read import read_file
from tui_agent.builtin.workspace import Workspace
from tui_agent.tools.hub import Hub
from tui_agent.tools.spec import ToolSpec

TEXT = "".join(f"line {i} of some ordinary text, nothing to find here\n" for i in range(20))
WARM = 10

Step = Callable[[int], Awaitable[Any]]


def hub_round_trip(hub: Hub, specs: dict[tuple[str, str], ToolSpec], server: str,
                   target: Path) -> Step:
    async def step(i: int) -> None:
        await hub.call(specs[server, "read"], {"path": str(target)})
        done = await hub.call(specs[server, "edit"], {
            "path": str(target), "old_string": f"value = {i}", "new_string": f"value = {i + 1}"})
        assert not done.is_error, done.text
    return step


def hub_noop(hub: Hub, specs: dict[tuple[str, str], ToolSpec], server: str) -> Step:
    async def step(i: int) -> None:
        done = await hub.call(specs[server, "noop"], {})
        assert not done.is_error, done.text
    return step


def sdk_round_trip(client: Any, target: Path) -> Step:
    async def step(i: int) -> None:
        await client.call_tool("read", {"path": str(target)})
        done = await client.call_tool("edit", {
            "path": str(target), "old_string": f"value = {i}", "new_string": f"value = {i + 1}"})
        assert not done.is_error, done
    return step


def sdk_noop(client: Any) -> Step:
    async def step(i: int) -> None:
        await client.call_tool("noop", {})
    return step


def direct_tools(workspace: Workspace, target: Path) -> Step:
    async def step(i: int) -> None:
        read_file(workspace, target)
        edit_file(workspace, target, f"value = {i}", f"value = {i + 1}")
    return step


def plain(target: Path) -> Step:
    async def step(i: int) -> None:
        text = target.read_text()
        target.write_text(text)
    return step


def safe(target: Path, store: Path) -> Step:
    async def step(i: int) -> None:
        safe_read_write(target, store, f"value = {i}\n".encode(), f"value = {i + 1}\n".encode())
    return step


async def round_trip_figures(hub: Hub, specs: dict[tuple[str, str], ToolSpec], tree: Path,
                             calls: int) -> None:
    from mcp import Client

    def target(name: str) -> Path:
        path = tree / f"edit-{name}.txt"
        path.write_text(TEXT + "value = 0\n")
        return path

    with tempfile.TemporaryDirectory() as temp:
        store = Path(temp)
        kept = Checkpoints(store / "direct")

        def keep(path: Path) -> str:
            return kept.keep(path)

        keeping = Workspace(cwd=tree, fixed_roots=[tree], before_write=keep)
        bare = Workspace(cwd=tree, fixed_roots=[tree])
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(file_server(tree), mode="legacy"))
            ways: dict[str, Step] = {
                "hub, stdio (as shipped): read + edit": hub_round_trip(
                    hub, specs, "local", target("local")),
                "hub, stdio: noop": hub_noop(hub, specs, "seams"),
                "hub, in memory (prototype): read + edit": hub_round_trip(
                    hub, specs, "memory", target("memory")),
                "hub, in memory: noop": hub_noop(hub, specs, "memory"),
                "SDK client, in memory: read + edit": sdk_round_trip(client, target("sdk")),
                "SDK client, in memory: noop": sdk_noop(client),
                "tool functions, checkpoint kept": direct_tools(keeping, target("tools")),
                "tool functions, no checkpoint": direct_tools(bare, target("bare")),
                "direct read + write (baseline)": plain(target("plain")),
                "safe direct read + write": safe(target("safe"), store),
            }
            seams = checkpoint_seams()
            times: dict[str, list[float]] = {name: [] for name in ways}
            try:
                for i in range(calls + WARM):
                    if i == WARM:
                        seams.reset()
                    for name, step in ways.items():
                        started = time.perf_counter()
                        await step(i)
                        times[name].append(time.perf_counter() - started)
            finally:
                seams.undo()
    width = max(map(len, times))
    print(f"read + edit round trip, {calls} calls each after {WARM} warm-up, interleaved (ms):")
    for name, values in times.items():
        print(f"  {name:<{width}}  {spread(values[WARM:], 1000)}")
    mid = {name: median(values[WARM:]) for name, values in times.items()}
    ours, baseline = mid["hub, stdio (as shipped): read + edit"], \
        mid["direct read + write (baseline)"]
    print(f"round trip ratio hub/direct: {ours / baseline:.1f}x (target <= 1.2x)")
    print(f"round trip ratio hub/safe direct: {ours / mid['safe direct read + write']:.1f}x")
    memory = mid["hub, in memory (prototype): read + edit"]
    print(f"  in memory (prototype) / direct: {memory / baseline:.1f}x, / safe direct: "
          f"{memory / mid['safe direct read + write']:.1f}x")
    print("where a stdio round trip's median goes (ms, by difference of medians):")
    floor = 2 * mid["hub, stdio: noop"]
    parts = [
        ("two calls' floor through the hub on stdio (2 x noop)", floor),
        ("  of which in memory (hub + SDK, 2 x noop)", 2 * mid["hub, in memory: noop"]),
        ("  of which the SDK client + server alone (2 x noop)",
         2 * mid["SDK client, in memory: noop"]),
        ("the tools' own work (read + edit, no checkpoint)", mid["tool functions, no checkpoint"]),
        ("the checkpoint (kept - not kept)", mid["tool functions, checkpoint kept"]
         - mid["tool functions, no checkpoint"]),
        ("the rest (arguments, results, validation of real calls)",
         ours - floor - mid["tool functions, checkpoint kept"]),
    ]
    for name, value in parts:
        print(f"  {name:<58} {value * 1000:7.2f}")
    print("the checkpoint's steps, in-process keeps (mean ms per call):")
    for label, spent in seams.spent.items():
        count = seams.calls[label]
        print(f"  {label:<42} {spent / max(count, 1) * 1000:7.3f}  ({count} calls)")
    full_journal()


def full_journal(lines: int = 5_000, keeps: int = 21) -> None:
    """A keep's cost with an empty journal and with one of ``lines`` lines."""
    with tempfile.TemporaryDirectory() as temp:
        target = Path(temp) / "file.txt"
        figures = []
        for size in (0, lines):
            store = Checkpoints(Path(temp) / f"store{size}")
            store.keep(target)  # makes the store
            journal.rewrite(store.journal, [Line(n, 0.0, f"/x/{n}", f"{n:064x}")
                                            for n in range(size)])
            spent = []
            for i in range(keeps):
                target.write_text(f"{i}\n")
                started = time.perf_counter()
                store.keep(target)
                spent.append(time.perf_counter() - started)
            figures.append(median(spent))
        print(f"a checkpoint keep, journal empty: {figures[0] * 1000:.2f} ms; journal of "
              f"{lines:,} lines: {figures[1] * 1000:.2f} ms (medians of {keeps})")


async def profile(hub: Hub, specs: dict[tuple[str, str], ToolSpec], tree: Path,
                  calls: int) -> None:
    """cProfile over ``calls`` round trips through the hub to the in-memory server: the
    client, the hub, the SDK's server and the tool all in this process."""
    target = tree / "edit-profiled.txt"
    target.write_text(TEXT + "value = 0\n")
    step = hub_round_trip(hub, specs, "memory", target)
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(calls):
        await step(i)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    print(f"profile of {calls} round trips through the hub in memory, by own time:")
    print(out.getvalue())
