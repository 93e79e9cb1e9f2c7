"""``tui-agent run --output text`` against a tool that reports thousands of progress
steps (our fake server's ``progress`` with ``every = 0``): in a pipe a few lines a
second, on a terminal one line rewritten at most ten times a second, the last state
always shown; ``--output jsonl`` keeps every report."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_agent_tools import fake_entry, write_config
from tests.test_terminal import read_until
from tests.waits import wait_pid
from tests.zygote import TUI_AGENT
from tui_agent.core.events import TextDelta, ToolCallStarted, ToolProgress, ToolResult
from tui_agent.headless.printers import TextPrinter
from tui_agent.headless.progress import CLEAR, PIPE_EVERY, TERMINAL_EVERY

pytestmark = pytest.mark.slow

STEPS = 3000
FINAL = f"… {STEPS}/{STEPS} (100%) step {STEPS}"


def command(tmp_path: Path, fake_llm: FakeLLM, output: str) -> list[str]:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("calc__progress",
                                                 {"total": STEPS, "every": 0}, id="p")]),
                  Reply(text="all done"))
    conf = write_config(tmp_path / "c.toml", calc=fake_entry(auto=["progress"]))
    return [*TUI_AGENT, "run", "--config", str(conf), "--model",
            "openai/fake-model", "--api-base", fake_llm.base_url, "--output", output, "go"]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm"}


def test_in_a_pipe_a_few_lines_a_second_and_the_last(tmp_path: Path,
                                                     fake_llm: FakeLLM) -> None:
    started = time.monotonic()
    done = subprocess.run(command(tmp_path, fake_llm, "text"), capture_output=True,
                          text=True, timeout=120, env=env(), stdin=subprocess.DEVNULL)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if "… " in line]
    assert 1 <= len(lines) <= 2 + took / PIPE_EVERY, (len(lines), took)
    assert lines[-1].strip() == FINAL
    assert "\r" not in done.stderr and "\x1b" not in done.stderr  # a log gets plain lines
    assert done.stderr.splitlines().index(lines[-1]) + 1 == \
        done.stderr.splitlines().index("  ← done after 3000 steps")
    assert done.stdout == "all done\n"


def test_jsonl_keeps_every_report(tmp_path: Path, fake_llm: FakeLLM) -> None:
    done = subprocess.run(command(tmp_path, fake_llm, "jsonl"), capture_output=True,
                          text=True, timeout=120, env=env(), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    steps = [e["progress"] for e in map(json.loads, done.stdout.splitlines())
             if e["type"] == "progress"]
    assert steps == [float(i) for i in range(1, STEPS + 1)]


def test_on_a_terminal_one_line_is_rewritten(tmp_path: Path, fake_llm: FakeLLM) -> None:
    argv = command(tmp_path, fake_llm, "text")
    started = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real CLI with stdout and stderr on a real terminal
        os.execve(argv[0], argv, env())
    try:
        shown = read_until(fd, b"all done", timeout=120)
        status = wait_pid(pid, 60)
        shown += read_rest(fd)
    finally:
        os.close(fd)
    took = time.monotonic() - started
    text = shown.decode()
    assert os.waitstatus_to_exitcode(status) == 0, text[-2000:]
    rewrites = text.count(CLEAR)
    assert 1 <= rewrites <= 2 + took / TERMINAL_EVERY, (rewrites, took)
    # What the terminal shows once each line's last rewrite has painted over the others.
    screen = [re.split(r"\r\x1b\[K|\r", row)[-1] for row in text.split("\r\n")]
    progress = [row for row in screen if "… " in row]
    assert [row.strip() for row in progress] == [FINAL]
    assert screen[screen.index(progress[0]) + 1] == "  ← done after 3000 steps"


def read_rest(fd: int, timeout: float = 60) -> bytes:
    """What the child wrote after the marker, up to the terminal's end (at most
    ``timeout`` seconds: a child that keeps the terminal open fails the test)."""
    rest = b""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([fd], [], [], left)[0]:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return rest
        if not chunk:
            return rest
        rest += chunk
    raise AssertionError(f"the terminal was still open after {timeout:g}s: {rest[-300:]!r}")



class Tty(io.StringIO):
    """Standard output and standard error on one terminal (a string that says so)."""

    def isatty(self) -> bool:
        return True


def test_a_report_after_the_result_never_wipes_the_reply() -> None:
    """A report that comes after its call's result (held: the line was rewritten a moment
    ago) is not shown later, over the reply then streaming on the same terminal: its
    carriage return and clear-line would wipe the reply's unfinished line."""
    async def run() -> str:
        tty = Tty()
        printer = TextPrinter(out=tty, err=tty)
        printer.show(ToolCallStarted("p", "calc__progress", "calc", "progress"))
        printer.show(ToolProgress("p", 1, 3))  # written: the first
        printer.show(ToolProgress("p", 2, 3))  # held: 0.1 s have not passed
        printer.show(ToolResult("p", False, "done"))  # shows 2/3 first
        printer.show(ToolProgress("p", 3, 3))  # late
        printer.show(TextDelta("the reply so f"))
        # Anything due from the progress line is due before this wakes (the loop runs
        # its timers in the order of their times, however loaded the machine).
        await asyncio.sleep(TERMINAL_EVERY * 3)
        return tty.getvalue()

    shown = asyncio.run(run())
    assert shown.endswith("← done\nthe reply so f"), shown
