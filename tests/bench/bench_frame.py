"""Launch to first frame on a real terminal (issue 33): ``tui-agent`` against bare Textual.

Both run as fresh processes on a pseudo-terminal of 120x40, alternating, with an empty
HOME and config directories, no API key, in an empty working directory. The clock starts
before the fork and stops when the first whole frame reaches the terminal: the frame's
last row is written and the input is on it (bare: a Textual ``Input``, focused; ours:
the command as installed, ``tui-agent``, whose prompt is focused in that frame). Each is
then quit with ctrl+q, as a user would. The first round only warms the page cache.

It prints the medians and spread, the ratio ours/bare (target: at most 1.2x) and the
modules of note that ``tui-agent`` had imported when it wrote its first frame.

    python -m tests.bench.bench_frame [--rounds 7] [--size 120x40] [--checkout DIR]

``--checkout DIR`` times the ``tui-agent`` of another checkout (e.g. ``git worktree add
/tmp/old OLD_COMMIT``) with this interpreter, as ``python -m tui_agent``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import math
import os
import pty
import select
import signal
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

from tests.bench._common import env, median, spread

BARE = """\
from textual.app import App
from textual.widgets import Input


class Bare(App):
    def compose(self):
        yield Input()


Bare().run()
"""

FIRST_PAINT = """\
import os, sys
from textual.app import App

display = App._display


def first_paint(self, screen, renderable):
    display(self, screen, renderable)
    if renderable is not None and os.environ.get("FIRST_PAINT_MODULES"):
        with open(os.environ.pop("FIRST_PAINT_MODULES"), "w", encoding="utf-8") as out:
            out.write("\\n".join(sorted(sys.modules)))


App._display = first_paint
sys.argv = ["tui-agent", *sys.argv[1:]]
from tui_agent.cli import entry

entry()
"""
"""``tui-agent`` as its console script runs it, but for one thing: at the first frame
written to the terminal, the names in ``sys.modules`` go to the file that
``FIRST_PAINT_MODULES`` names."""

NOTABLE = ("pydantic", "litellm", "mcp", "mcp_types", "tiktoken", "httpx", "anyio",
           "openai", "docker", "starlark", "tomlkit", "platformdirs", "yaml", "jsonschema",
           "textual.widgets._markdown", "markdown_it", "tree_sitter", "PIL",
           "tui_agent.core.llm", "tui_agent.core.attachments", "tui_agent.tools.auth",
           "tui_agent.codemode", "tui_agent.wiring.runtime", "tui_agent.config.model")
"""Packages the first frame should not need, printed when loaded by then."""


def ours_command(checkout: Path | None = None) -> list[str]:
    """The ``tui-agent`` console script beside this interpreter (``-m tui_agent`` when it
    is not installed as a script, or for another checkout)."""
    script = Path(sys.executable).with_name("tui-agent")
    if checkout is not None:
        return [sys.executable, "-m", "tui_agent"]
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui_agent"]


def clean_env(home: str, checkout: Path | None = None) -> dict[str, str]:
    """The environment of a first run: every config and state directory empty, no key."""
    environ = {k: v for k, v in env().items()
               if not k.endswith("_API_KEY") and not k.startswith(("TUI_AGENT", "TEXTUAL"))
               # An installed package has its bytecode compiled; an editable checkout gets
               # it on the warm-up round (else our modules would compile at every launch).
               and k != "PYTHONDONTWRITEBYTECODE"}
    environ.update(HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state",
                   XDG_DATA_HOME=f"{home}/data", XDG_CACHE_HOME=f"{home}/cache",
                   TERM="xterm-256color", COLORTERM="truecolor")
    if checkout is not None:
        environ["PYTHONPATH"] = os.pathsep.join([str(checkout), environ["PYTHONPATH"]])
    return environ


def launch(cmd: list[str], environ: dict[str, str], cwd: str, size: tuple[int, int],
           marker: bytes, timeout: float = 60) -> tuple[float, float]:
    """Seconds from the fork to the first frame of ``cmd`` on a fresh pty of ``size``
    (columns, rows): the frame's last row written, with ``marker`` shown by then; and the
    CPU seconds the program had used by then. The program is then quit with ctrl+q
    (killed if it does not end)."""
    columns, rows = size
    last_row = f"\x1b[{rows};1H".encode()
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the window size is set before the program looks at it
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            os.chdir(cwd)
            # Textual takes COLUMNS and LINES over the terminal's own size (a test run
            # may have them set): the same size, both ways.
            os.execvpe(cmd[0], cmd, {**environ, "COLUMNS": str(columns), "LINES": str(rows)})
        finally:
            os._exit(127)
    seen = b""
    try:
        while not (last_row in seen and marker in seen):
            left = started + timeout - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no first frame from {cmd} within {timeout} s: "
                                   f"{seen[-300:]!r}")
            if select.select([fd], [], [], left)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the program closed the terminal
                    chunk = b""
                if not chunk:
                    raise RuntimeError(f"{cmd} ended before its first frame: {seen[-300:]!r}")
                seen += chunk
        took = time.perf_counter() - started
        cpu = cpu_seconds(pid)
        quit_app(pid, fd)
    finally:
        os.close(fd)
    return took, cpu


def cpu_seconds(pid: int) -> float:
    """The CPU time of every thread of ``pid`` so far (the scheduler's own count, in ns:
    on a shared machine it varies far less than the wall time); NaN where there is none."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):  # a thread that just ended
                total += int((task / "schedstat").read_text().split()[0])
    except OSError:
        return math.nan
    return total / 1e9


def quit_app(pid: int, fd: int, grace: float = 15) -> None:
    """ctrl+q, then read until the program ends (a pty left unread can block it)."""
    os.write(fd, b"\x11")
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        if select.select([fd], [], [], 0.05)[0]:
            with contextlib.suppress(OSError):  # EIO: it closed the terminal
                os.read(fd, 65536)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def modules_at_first_paint(environ: dict[str, str], cwd: str,
                           size: tuple[int, int] = (120, 40)) -> list[str]:
    """The names in ``sys.modules`` when ``tui-agent`` wrote its first frame."""
    with tempfile.TemporaryDirectory() as out:
        listing = Path(out) / "modules"
        timed = {**environ, "FIRST_PAINT_MODULES": str(listing)}
        launch([sys.executable, "-c", FIRST_PAINT], timed, cwd, size, b"")
        deadline = time.monotonic() + 10
        while not listing.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return listing.read_text(encoding="utf-8").split()


def loaded_of_note(modules: list[str]) -> list[str]:
    return [name for name in NOTABLE
            if any(m == name or m.startswith(name + ".") for m in modules)]


def measure(rounds: int, size: tuple[int, int],
            checkout: Path | None = None) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"bare": [], "ours": []}
    cpu: dict[str, list[float]] = {"bare": [], "ours": []}
    with tempfile.TemporaryDirectory() as home:
        work = Path(home) / "work"
        work.mkdir()
        environ = clean_env(home, checkout)
        commands = {"bare": ([sys.executable, "-c", BARE], "▊".encode()),
                    "ours": (ours_command(checkout), "╭".encode())}
        for i in range(rounds + 1):
            for kind in (("bare", "ours") if i % 2 else ("ours", "bare")):
                cmd, marker = commands[kind]
                took, used = launch(cmd, environ, str(work), size, marker)
                if i:  # the first round warms the page cache
                    times[kind].append(took)
                    cpu[kind].append(used)
        modules = modules_at_first_paint(environ, str(work), size)
    print(f"launch to first frame on a {size[0]}x{size[1]} pty, {rounds} fresh processes "
          f"each, alternating")
    for kind, values in times.items():
        print(f"  {kind:<5} {spread(values, 1000)} ms")
    ratio = median(times["ours"]) / median(times["bare"])
    print(f"  ratio ours/bare (median): {ratio:.2f}x   (target: at most 1.2x)")
    print("  CPU time by then, all threads (steadier than the wall time on a busy machine):")
    for kind, values in cpu.items():
        print(f"    {kind:<5} {spread(values, 1000)} ms")
    print(f"    ratio ours/bare (median): {median(cpu['ours']) / median(cpu['bare']):.2f}x")
    print(f"  loaded by tui-agent's first frame ({len(modules)} modules): "
          f"{', '.join(loaded_of_note(modules)) or 'none of note'}")
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", default="120x40", help="COLUMNSxROWS")
    parser.add_argument("--checkout", type=Path, help="time this checkout's tui-agent")
    args = parser.parse_args(argv)
    columns, rows = (int(n) for n in args.size.lower().split("x"))
    measure(args.rounds, (columns, rows), args.checkout)


if __name__ == "__main__":
    main()
