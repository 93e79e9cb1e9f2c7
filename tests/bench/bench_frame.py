"""Launch to first frame on a real terminal (issue 33): ``tui-agent`` against bare Textual.

Both run as fresh processes on a pseudo-terminal of 120x40, alternating, with an empty
HOME and config directories, no API key, in an empty working directory. The clock starts
before the fork and stops when the first whole frame reaches the terminal: the frame's
last row is written and the input is on it (bare: a Textual ``Input``, focused; ours:
the command as installed, ``tui-agent``, whose prompt is focused in that frame). Each is
then quit with ctrl+q, as a user would. The first round only warms the page cache.

It prints the medians and spread, the ratio ours/bare (target: at most 1.2x) and the
modules of note that ``tui-agent`` had imported when it wrote its first frame.

Two paths of ours are timed: ``welcome`` (no key: the first-run welcome) and ``model``
(``tui-agent --model openai/x --api-base URL``: a model configured, as people who use it
daily start it). ``--tmux`` runs every program in a pane of a fresh tmux server instead of
on a bare pty (``TERM=screen``, where most people who live in a terminal run it); the
frame is then read from tmux's control mode, as tmux receives it.

    python -m tests.bench.bench_frame [--rounds 7] [--size 120x40] [--tmux]
                                      [--paths welcome,model] [--checkout DIR]
                                      [--skills N] [--agents-md KB]

``--skills N`` installs N Agent Skills in the user's skills folder first, ``--agents-md KB``
writes an ``AGENTS.md`` of that size in the user's config folder (issue 47: the first
frame must wait for neither).

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
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
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
               and k != "PYTHONDONTWRITEBYTECODE"
               # tui-agent as installed, not this checkout's folder on PYTHONPATH: that
               # would shadow a non-editable install, and the checkout has no
               # tui_agent.themes (pip maps themes/ into the package when it installs).
               and k != "PYTHONPATH"}
    environ.update(HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state",
                   XDG_DATA_HOME=f"{home}/data", XDG_CACHE_HOME=f"{home}/cache",
                   TERM="xterm-256color", COLORTERM="truecolor")
    if checkout is not None:
        environ["PYTHONPATH"] = str(checkout)
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


TMUX_START = b"<<bench-start>>"
"""Printed by the pane's shell just before it runs the program: the clock starts there
(the tmux server's own start is not the program's)."""


def launch_tmux(cmd: list[str], environ: dict[str, str], cwd: str, size: tuple[int, int],
                marker: bytes, timeout: float = 60) -> tuple[float, float]:
    """:func:`launch`, in the one pane of a fresh tmux server (its own socket, no user
    config), read through tmux's control mode: the time from the pane's shell handing over
    to ``cmd`` to the frame's last row and ``marker`` reaching tmux."""
    with tempfile.TemporaryDirectory() as folder:  # the server's socket, removed after
        return _launch_tmux(cmd, environ, cwd, size, marker, timeout,
                            str(Path(folder) / "socket"))


def _launch_tmux(cmd: list[str], environ: dict[str, str], cwd: str, size: tuple[int, int],
                 marker: bytes, timeout: float, socket: str) -> tuple[float, float]:
    columns, rows = size
    last_row = f"\x1b[{rows};1H".encode()
    shell = f"printf '%s'; exec {shlex.join(cmd)}" % TMUX_START.decode()
    tmux = subprocess.Popen(
        ["tmux", "-S", socket, "-f", "/dev/null", "-C", "new-session", "-x", str(columns),
         "-y", str(rows), "-c", cwd, shell],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        # Textual takes COLUMNS and LINES over the terminal's size (as in launch()).
        env={**{k: v for k, v in environ.items() if k not in ("TMUX", "TERM_PROGRAM")},
             "COLUMNS": str(columns), "LINES": str(rows)})
    assert tmux.stdin is not None and tmux.stdout is not None
    fd = tmux.stdout.fileno()
    started: float | None = None
    seen = b""
    pending = b""
    deadline = time.perf_counter() + timeout
    try:
        while not (last_row in seen and marker in seen):
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no first frame from {cmd} in tmux within {timeout} s: "
                                   f"{seen[-300:]!r}")
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"tmux ended before {cmd}'s first frame: {seen[-300:]!r}")
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if not line.startswith(b"%output "):
                    continue
                data = unescape(line.split(b" ", 2)[2])
                if started is None:
                    if TMUX_START not in data:
                        continue
                    started = time.perf_counter()
                    data = data.split(TMUX_START, 1)[1]
                seen += data
        assert started is not None
        took = time.perf_counter() - started
        cpu = cpu_seconds(pane_pid(socket))
        tmux.stdin.write(b"send-keys C-q\n")
        tmux.stdin.flush()
        end_tmux(tmux, socket)
    finally:
        if tmux.poll() is None:
            end_tmux(tmux, socket, grace=0)
    return took, cpu


def unescape(data: bytes) -> bytes:
    """A control-mode ``%output`` line's data: tmux writes bytes below 32 and the backslash
    as three octal digits after a backslash."""
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), data)


def pane_pid(socket: str) -> int:
    out = subprocess.run(["tmux", "-S", socket, "display-message", "-p", "#{pane_pid}"],
                         capture_output=True, text=True, timeout=10)
    return int(out.stdout.strip() or 0)


def end_tmux(tmux: subprocess.Popen[bytes], socket: str, grace: float = 15) -> None:
    """Wait for the program to quit (its pane, and so the server, ends with it), reading
    tmux's output meanwhile; then kill what is left."""
    assert tmux.stdout is not None
    deadline = time.monotonic() + grace
    while tmux.poll() is None and time.monotonic() < deadline:
        if select.select([tmux.stdout.fileno()], [], [], 0.05)[0]:
            os.read(tmux.stdout.fileno(), 65536)
    subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=10)
    with contextlib.suppress(subprocess.TimeoutExpired):
        tmux.wait(5)
    if tmux.poll() is None:
        tmux.kill()
        tmux.wait(5)


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


MODEL_FLAGS = ["--model", "openai/x", "--api-base", "http://127.0.0.1:9/v1"]
"""The ``model`` path: a model configured on the command line (nothing listens there:
the first frame asks the server nothing)."""


def measure(rounds: int, size: tuple[int, int], checkout: Path | None = None,
            tmux: bool = False, paths: tuple[str, ...] = ("welcome",), skills: int = 0,
            agents_md: int = 0) -> dict[str, list[float]]:
    """Times ``bare`` and each of ``paths`` of ours, alternating their order each round
    (with ``skills`` Agent Skills installed in the user's skills folder; ``agents_md``:
    with an ``AGENTS.md`` of that many KB in the user's config folder)."""
    start = launch_tmux if tmux else launch
    times: dict[str, list[float]] = {"bare": [], **{kind: [] for kind in paths}}
    cpu: dict[str, list[float]] = {kind: [] for kind in times}
    with tempfile.TemporaryDirectory() as home:
        work = Path(home) / "work"
        work.mkdir()
        environ = clean_env(home, checkout)
        if skills:
            from tests.bench.bench_skills import install

            install(Path(home) / "config" / "tui-agent" / "skills", skills)
        if agents_md:
            write_agents_md(Path(home) / "config" / "tui-agent" / "AGENTS.md", agents_md)
        ours = ours_command(checkout)
        commands = {"bare": ([sys.executable, "-c", BARE], "▊".encode()),
                    "welcome": (ours, "╭".encode()),
                    "model": ([*ours, *MODEL_FLAGS], "╭".encode())}
        kinds = list(times)
        for i in range(rounds + 1):
            for kind in (kinds if i % 2 else kinds[::-1]):
                cmd, marker = commands[kind]
                took, used = start(cmd, environ, str(work), size, marker)
                if i:  # the first round warms the page cache
                    times[kind].append(took)
                    cpu[kind].append(used)
        modules = modules_at_first_paint(environ, str(work), size)
    where = "a tmux pane (TERM=screen)" if tmux else "a pty"
    memory = f", a {agents_md} KB AGENTS.md in the config folder" if agents_md else ""
    print(f"launch to first frame in {where} of {size[0]}x{size[1]}, {rounds} fresh "
          f"processes each, alternating{f', {skills} skills installed' if skills else ''}"
          f"{memory}")
    for kind, values in times.items():
        print(f"  {kind:<7} {spread(values, 1000)} ms")
    for kind in paths:
        ratio = median(times[kind]) / median(times["bare"])
        print(f"  ratio ours/bare ({kind}, median): {ratio:.2f}x   (target: at most 1.2x)")
    print("  CPU time by then, all threads (steadier than the wall time on a busy machine):")
    for kind, values in cpu.items():
        print(f"    {kind:<7} {spread(values, 1000)} ms")
    for kind in paths:
        print(f"    ratio ours/bare ({kind}, median): "
              f"{median(cpu[kind]) / median(cpu['bare']):.2f}x")
    print(f"  loaded by tui-agent's first frame ({len(modules)} modules): "
          f"{', '.join(loaded_of_note(modules)) or 'none of note'}")
    return times


def write_agents_md(path: Path, kb: int) -> None:
    """An ``AGENTS.md`` of ``kb`` KB of plain instructions (the user's own memory: read
    whatever the project, no trust asked)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = "- Run the tests of the module you change before you commit it.\n"
    path.write_text("# Notes\n" + line * (kb * 1024 // len(line)), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", default="120x40", help="COLUMNSxROWS")
    parser.add_argument("--checkout", type=Path, help="time this checkout's tui-agent")
    parser.add_argument("--tmux", action="store_true",
                        help="run each program in a tmux pane (TERM=screen)")
    parser.add_argument("--paths", default="welcome,model",
                        help="ours to time: welcome (no key), model (--model and --api-base)")
    parser.add_argument("--skills", type=int, default=0, metavar="N",
                        help="install N Agent Skills in the user's skills folder first")
    parser.add_argument("--agents-md", type=int, default=0, metavar="KB",
                        help="with an AGENTS.md of KB kilobytes in the user's config folder")
    args = parser.parse_args(argv)
    columns, rows = (int(n) for n in args.size.lower().split("x"))
    paths = tuple(p for p in args.paths.split(",") if p)
    unknown = set(paths) - {"welcome", "model"}
    if unknown:
        parser.error(f"--paths: unknown {', '.join(sorted(unknown))} (welcome, model)")
    if args.tmux and shutil.which("tmux") is None:
        parser.error("--tmux: no tmux on PATH")
    measure(args.rounds, (columns, rows), args.checkout, args.tmux, paths, args.skills,
            args.agents_md)


if __name__ == "__main__":
    main()
