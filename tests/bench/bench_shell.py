"""A ``shell`` command under bubblewrap against the same command unsandboxed.

Each command is started as the tool starts it (:class:`~tui_agent.builtin.shell.process.
Running`: its own session, the process ceiling, the scrubbed environment, output read to
the end), once with bwrap's command line (:func:`~tui_agent.builtin.shell.sandbox.
bwrap_argv`: the project writable, secrets hidden, no network, its own PID namespace) and
once as a plain ``sh -c``, and once with each part of bwrap's command line left out
(what that part costs), all interleaved round by round; the figure is the difference of
the medians. Target: at most 30 ms over unsandboxed. The MCP round trip around it is the
same for both and is not timed here (see bench_hub).

Then what keeping a command's changes for ``/rewind`` adds to it
(:class:`~tui_agent.builtin.checkpoints.shell_watch.ShellWatch`: a look before, a look
after) in a project of ``--files`` small files: the first command, which copies every
file into the store (and where that time goes), and the next ones, which only list it.

    python -m tests.bench.bench_shell [--runs 21] [--files 5000]
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
from tui_agent.builtin.shell.sandbox import bwrap_argv, bwrap_problem, hide, plain_argv


async def once(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    job = await Running.start(argv, cwd, command_env(os.environ), 30_000, 512, argv[-1])
    assert await job.wait(30), argv
    assert job.returncode == 0, (argv, job.capture.text())
    return time.perf_counter() - started


def project_of(root: Path, files: int) -> Path:
    project = root / "project"
    for i in range(files):
        folder = project / f"d{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.py").write_text(f"print({i})\n" * 40)
    return project


def watched(runs: int, files: int) -> None:
    """The time a look before and after a command adds, first and then; where the first
    one's time goes (seams on its steps, summed)."""
    from tests.bench._builtin_seams import Seams
    from tui_agent.builtin.checkpoints import blobs, shell_watch

    with tempfile.TemporaryDirectory() as tmp:
        project = project_of(Path(tmp), files)
        seams = Seams()
        seams.wrap(shell_watch.ShellWatch, "_read", "read + hash + blob write, each file")
        seams.wrap(blobs.Blobs, "put", "  of which the blob write (hash, temp, rename)")
        seams.wrap(blobs, "private_dir", "    of which the blob folder's check")
        watch = ShellWatch(Checkpoints(Path(tmp) / "store"))
        started = time.perf_counter()
        found = watch.before([project])
        before = time.perf_counter() - started
        seams.undo()
        started = time.perf_counter()
        listed = len(dict(watch._walk([project], 10**6)))
        walk = time.perf_counter() - started
        started = time.perf_counter()
        watch.after(found)
        first = before + time.perf_counter() - started
        then: list[float] = []
        for i in range(runs):
            started = time.perf_counter()
            found = watch.before([project])
            (project / "d0" / "file0.py").write_text(f"changed {i}\n")
            watch.after(found)
            then.append(time.perf_counter() - started)
        print(f"keeping a command's changes, {files:,} files of 400 bytes:")
        print(f"  first command (copies them all) {first * 1000:.0f} ms")
        print(f"    its look before: {before * 1000:.0f} ms, of which:")
        for label, spent in seams.spent.items():
            print(f"      {label:<48} {spent * 1000:6.0f} ms ({seams.calls[label]} calls)")
        print(f"    a walk alone (scandir + stat of {listed:,} files, page cache warm): "
              f"{walk * 1000:.0f} ms")
        print(f"  each next one (lists them)      {spread(then, 1000)} ms")


def variants(command: str, project: Path) -> dict[str, list[str]]:
    """bwrap's command line as the tool builds it, and with one part of it left out each
    (the figure says what that part costs)."""
    full = bwrap_argv(command, project, [project], False)
    hidden = hide(os.environ)

    def without(*parts: str, count: int = 1) -> list[str]:
        argv = list(full)
        for part in parts:
            at = argv.index(part)
            del argv[at:at + 1 + count]
        return argv

    no_hide = list(full)
    for at in range(len(no_hide) - len(hidden) + 1):
        if no_hide[at:at + len(hidden)] == hidden:
            del no_hide[at:at + len(hidden)]
            break
    return {
        "unsandboxed": plain_argv(command),
        "bwrap as shipped": full,
        f"  without the {len(hidden) // 3} hidden places": no_hide,
        "  without --unshare-net": without("--unshare-net", count=0),
        "  without --unshare-pid": without("--unshare-pid", count=0),
        "  without --unshare-ipc --unshare-uts": without("--unshare-ipc", "--unshare-uts",
                                                         count=0),
        "  without --proc /proc": without("--proc"),
        "  without --dev /dev": without("--dev"),
        "  without --tmpfs /tmp": without("--tmpfs"),
        "  without --die-with-parent --new-session": without(
            "--die-with-parent", "--new-session", count=0),
        "bwrap --ro-bind / / alone": [full[0], "--ro-bind", "/", "/", "--chdir", str(project),
                                      "/bin/sh", "-c", command],
    }


async def main(runs: int, files: int) -> int:
    watched(max(3, runs // 5), files)
    problem = bwrap_problem()
    if problem is not None:
        print(f"no bubblewrap here ({problem}): nothing measured")
        return 1
    started = time.perf_counter()
    bwrap_problem.__wrapped__()
    print(f"bwrap's self-test (once per server, at its first command): "
          f"{(time.perf_counter() - started) * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        for i in range(200):
            (project / f"file{i}.txt").write_text("x")
        for label, command in (("true", "true"), ("ls of the project", "ls -la")):
            ways = variants(command, project)
            times: dict[str, list[float]] = {name: [] for name in ways}
            for _ in range(runs + 1):  # the first round is warm-up
                for name, argv in ways.items():
                    times[name].append(await once(argv, project))
            plain = median(times["unsandboxed"][1:])
            print(f"{label}, {runs} rounds interleaved (ms; overhead: median over "
                  "unsandboxed's):")
            for name, values in times.items():
                over = (median(values[1:]) - plain) * 1000
                print(f"  {name:<44} {spread(values[1:], 1000)}  overhead {over:+.1f}")
            shipped = median(times["bwrap as shipped"][1:]) - plain
            print(f"  overhead bwrap-unsandboxed {shipped * 1000:.1f} ms (median; target <= "
                  "30 ms)")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--files", type=int, default=5000)
    given = parser.parse_args()
    sys.exit(asyncio.run(main(given.runs, given.files)))
