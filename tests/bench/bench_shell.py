"""A ``shell`` command under bubblewrap against the same command unsandboxed.

Each command is started as the tool starts it (:class:`~tui_agent.builtin.shell.process.
Running`: its own session, the process ceiling, the scrubbed environment, output read to
the end), once with bwrap's command line (:func:`~tui_agent.builtin.shell.sandbox.
bwrap_command`: the project writable, its ``.git`` read-only, secrets hidden, no network
and no Unix sockets, its own user and PID namespaces) and
once as a plain ``sh -c``, alternating; the figure is the difference of the medians.
Target: at most 30 ms over unsandboxed. The MCP round trip around it is the same for both
and is not timed here (see bench_hub).

Then what keeping a command's changes for ``/rewind`` adds to it
(:class:`~tui_agent.builtin.checkpoints.shell_watch.ShellWatch`: a look before, a look
after) in a project of ``--files`` small files: the first command, which copies every
file into the store, and the next ones, which only list the project.

    python -m tests.bench.bench_shell [--runs 50] [--files 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from tests.bench._common import median, spread
from tui_agent.builtin.checkpoints import Checkpoints
from tui_agent.builtin.checkpoints.shell_watch import ShellWatch
from tui_agent.builtin.shell.environment import command_env
from tui_agent.builtin.shell.process import Running
from tui_agent.builtin.shell.sandbox import Command, bwrap_command, bwrap_problem, plain_argv


async def once(line: Command, cwd: Path) -> float:
    """One command started as the tool starts it; its seconds."""
    started = time.perf_counter()
    try:
        job = await Running.start(line.argv, cwd, command_env(os.environ), 30_000, 512,
                                  line.argv[-1], line.fds)
    finally:
        line.close()
    assert await job.wait(30), line.argv
    assert job.returncode == 0, (line.argv, job.capture.text())
    return time.perf_counter() - started


def watched(runs: int, files: int) -> None:
    """The time a look before and after a command adds, first and then."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        for i in range(files):
            folder = project / f"d{i // 100}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"file{i}.py").write_text(f"print({i})\n" * 40)
        watch = ShellWatch(Checkpoints(Path(tmp) / "store"))
        started = time.perf_counter()
        watch.after(watch.before([project]))
        first = time.perf_counter() - started
        then: list[float] = []
        for i in range(runs):
            started = time.perf_counter()
            found = watch.before([project])
            (project / "d0" / "file0.py").write_text(f"changed {i}\n")
            watch.after(found)
            then.append(time.perf_counter() - started)
        print(f"keeping a command's changes, {files:,} files of 400 bytes:")
        print(f"  first command (copies them all) {first * 1000:.0f} ms")
        print(f"  each next one (lists them)      {spread(then, 1000)} ms")


async def main(runs: int, files: int) -> int:
    watched(max(3, runs // 5), files)
    problem = bwrap_problem()
    if problem is not None:
        print(f"no bubblewrap here ({problem}): nothing measured")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        for i in range(200):
            (project / f"file{i}.txt").write_text("x")
        for label, command in (("true", "true"), ("ls of the project", "ls -la")):
            plain: list[float] = []
            boxed: list[float] = []
            for _ in range(runs):
                plain.append(await once(Command(plain_argv(command)), project))
                boxed.append(await once(bwrap_command(command, project, [project], False),
                                        project))
            print(f"{label}:")
            print(f"  unsandboxed   {spread(plain, 1000)} ms")
            print(f"  bwrap         {spread(boxed, 1000)} ms")
            over = (median(boxed) - median(plain)) * 1000
            print(f"  overhead bwrap-unsandboxed {over:.1f} ms (median; target <= 30 ms)")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--files", type=int, default=5000)
    given = parser.parse_args()
    sys.exit(asyncio.run(main(given.runs, given.files)))
