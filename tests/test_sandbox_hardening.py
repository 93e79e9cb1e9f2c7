"""Code mode's sandbox under pressure: the deadline cuts a call in flight, ``s`` approves
only the tools the question listed, scripts share one memory budget, crashes are named
as the limit they are, the child is locked down and dies with its parent (and so does
every stdio server), and big values are refused by name, not by accident."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.conftest import ROOT, fake_server, tagged_processes
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_agent import RecordingGate
from tests.test_codemode import coded, result_of, script, turn
from tui_agent.codemode import sandbox, spare
from tui_agent.codemode.sandbox import CallFailed
from tui_agent.config.models import CodeModeSettings
from tui_agent.core.events import ToolResult
from tui_agent.core.permissions import Decision, ServerRules

pytestmark = [pytest.mark.anyio]

AUTO = {"calc": ServerRules(auto=["*"])}


class Held:
    """A bridge whose calls wait until released (``hold``), or answer at once."""

    def __init__(self, value: Any = "ok", hold: bool = False) -> None:
        self.value = value
        self.paused = 0.0
        self.release = asyncio.Event()
        self.entered = asyncio.Event()
        if not hold:
            self.release.set()

    async def call(self, key: str, name: str, arguments: dict[str, Any]) -> Any:
        self.entered.set()
        await self.release.wait()
        return self.value


BINDINGS = {"calc": {"echo": "calc\0echo"}}


def children_of(pid: int) -> list[int]:
    """Our sandbox children: ``child.py`` processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"child.py" in cmdline:
            found.append(int(entry.name))
    return found


# -- 8: the deadline cuts a call in flight ---------------------------------------------

@pytest.mark.slow
async def test_the_deadline_cancels_the_call_in_flight_and_says_what_ran(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    code = 'calc.add(a=1, b=2)\ncalc.add(a=3, b=4)\ncalc.hang()\ncalc.echo(text="never")'
    fake_llm.push(script(code), Reply(text="ok"))
    # The hub would end the hanging call after 60 s: a turn shorter than that was cut by
    # the script's 2 s deadline (on a quiet machine the turn takes ~3 s; the server's
    # start is not timed, it takes seconds on a busy one).
    hub_timeout = 60
    async with coded(fake_llm, tmp_path,
                     {"calc": fake_server("--marks", str(marks), timeout=hub_timeout)},
                     rules=AUTO, timeout=2) as agent:
        started = time.monotonic()
        events = await turn(agent)
        took = time.monotonic() - started
    text = result_of(events).text
    assert text.startswith("error (limit): timeout: the script ran longer than 2 s"), text
    assert "completed: calc.add ×2\ncancelled while running: calc.hang (the server was told" \
        in text
    assert "not started: every call after that point" in text
    inner = {e.id: e for e in events if isinstance(e, ToolResult) and e.id.startswith("s1.")}
    assert inner["s1.3"].is_error and inner["s1.3"].text == "cancelled before it finished"
    deadline = time.monotonic() + 5
    while not (marks / "cancelled").exists():  # the server got notifications/cancelled
        assert time.monotonic() < deadline, "the server was never told the call was cancelled"
        await asyncio.sleep(0.05)
    assert not (marks / "echo").exists()
    assert took < hub_timeout, took


async def test_time_spent_deciding_does_not_count_against_the_deadline() -> None:
    class Deciding:
        """A person takes 1.5 s to decide, longer than the script's whole timeout."""

        def __init__(self) -> None:
            self.since: float | None = None

        @property
        def paused(self) -> float:
            return time.monotonic() - self.since if self.since is not None else 0.0

        async def call(self, key: str, name: str, arguments: dict[str, Any]) -> Any:
            self.since = time.monotonic()
            await asyncio.sleep(1.5)
            return "approved and run"

    outcome = await sandbox.run('result = calc.echo(text="x")', BINDINGS, Deciding(),
                                CodeModeSettings(timeout=1))
    assert outcome.ok and outcome.result == "approved and run", outcome.text()


# -- 9: `s` approves exactly the tools it showed -----------------------------------------

@pytest.mark.slow
async def test_approving_the_script_covers_only_the_tools_it_listed(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    code = ('calc.add(a=1, b=1)\ncalc.add(a=2, b=2)\n'  # read-only tools: s may cover them
            'tools = {"p": getattr(calc, "pi" + "d")}\nresult = tools["p"]()')
    fake_llm.push(script(code), Reply(text="ok"))
    gate = RecordingGate(Decision.whole_script(), Decision.approve())
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, gate) as agent:
        events = await turn(agent)
    assert not result_of(events).is_error, result_of(events).text
    assert [(a.tool, a.script_tools) for a in gate.asked] == [
        ("add", ("calc.add",)), ("pid", ("calc.pid",))]


# -- 10: one budget for all scripts ------------------------------------------------------

async def test_scripts_over_the_cap_wait_then_fail_naming_the_limit() -> None:
    limits = CodeModeSettings(timeout=1, max_scripts=1)
    first = Held(hold=True)
    running = asyncio.create_task(sandbox.run('result = calc.echo(text="1")', BINDINGS, first,
                                              CodeModeSettings(timeout=30, max_scripts=1)))
    await first.entered.wait()
    refused = await sandbox.run('result = 2', BINDINGS, Held(), limits)
    assert not refused.ok
    assert refused.text().startswith(
        "error (limit): the script did not start: 1 scripts were already running, the most "
        "allowed at once (code_mode max_scripts); it waited 1 s"), refused.text()
    waiting = asyncio.create_task(sandbox.run('result = 3', BINDINGS, Held(),
                                              CodeModeSettings(timeout=30, max_scripts=1)))
    await asyncio.sleep(0.3)
    assert not waiting.done()  # it waits for room
    first.release.set()
    assert (await running).result == "ok"
    assert (await waiting).result == 3


async def test_the_memory_budget_is_shared() -> None:
    limits = CodeModeSettings(timeout=1, max_memory_mb=64, max_total_memory_mb=100)
    first = Held(hold=True)
    running = asyncio.create_task(sandbox.run(
        'result = calc.echo(text="1")', BINDINGS, first,
        CodeModeSettings(timeout=30, max_memory_mb=64, max_total_memory_mb=100)))
    await first.entered.wait()
    refused = await sandbox.run('result = 2', BINDINGS, Held(), limits)
    assert "the scripts running held 64 MB and this one needs 64 MB more, over the 100 MB " \
           "all scripts may take together (code_mode max_total_memory_mb)" in refused.text()
    first.release.set()
    assert (await running).ok
    assert (await sandbox.run('result = 2', BINDINGS, Held(), limits)).result == 2


def test_one_script_must_fit_the_budget() -> None:
    with pytest.raises(ValidationError, match=r"max_memory_mb \(4096\) is more than "
                                              r"max_total_memory_mb \(2048\)"):
        CodeModeSettings(max_memory_mb=4096)


# -- 11: a crash is named as the limit it is ---------------------------------------------

@pytest.mark.parametrize("code", [
    "x = []\nfor i in range(200000):\n  x = [x]\nresult = len(str(x))",
    "d = {}\nfor i in range(20000000):\n  d[i] = i\nresult = len(d)",
], ids=["deep-nesting", "big-dict"])
async def test_a_segfault_is_reported_as_the_limit_to_raise(code: str) -> None:
    # A small memory limit is reached sooner; the timeout only guards against a hang (on a
    # loaded machine filling even 128 MB can take many seconds).
    limits = CodeModeSettings(timeout=120, max_memory_mb=128)
    outcome = await sandbox.run(code, {}, Held(), limits)
    text = outcome.text()
    assert "exit status" not in text
    assert text.startswith("error (limit): "), text
    assert "code_mode max_depth is 200, max_memory_mb 128" in text or \
        "memory limit: the script needed more than 128 MB (code_mode max_memory_mb)" in text


# -- 12: dying with the parent -----------------------------------------------------------

DRIVER = """
import asyncio, sys
from pathlib import Path
from tui_agent.codemode import sandbox, spare
from tui_agent.config.models import CodeModeSettings, ServerConfig
from tui_agent.tools.hub import Hub

class Bridge:
    paused = 0.0
    async def call(self, key, name, arguments):
        print("in a call", flush=True)  # then the script spins, reading nothing
        return "ok"

async def main():
    hub = Hub({"calc": ServerConfig(command=sys.executable, args=["-m", "tests.fakes.mcp_server",
                                                                  "--ignore-sigterm"],
                                    cwd=sys.argv[1], env={"TUI_AGENT_TEST_TAG": sys.argv[2]})},
              log_dir=Path(sys.argv[3]))
    hub.start()
    await hub.wait_all()
    await sandbox.run('calc.echo(text="x")\\nn = 0\\nfor i in range(1000000000):\\n  n += 1',
                      {"calc": {"echo": "calc\\0echo"}}, Bridge(), CodeModeSettings(timeout=600))

asyncio.run(main())
"""


@pytest.mark.slow
def test_kill_9_takes_the_script_child_and_the_servers_along(no_leftover_servers: str,
                                                            tmp_path: Path) -> None:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(ROOT), no_leftover_servers,
                               str(tmp_path)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert driver.stdout is not None
    assert driver.stdout.readline().strip() == "in a call"
    time.sleep(0.3)  # the script is spinning now, not reading its input
    children = children_of(driver.pid)
    servers = [p for p in tagged_processes(no_leftover_servers) if p != driver.pid]
    assert len(children) == 1 and servers, (children, servers)
    driver.send_signal(signal.SIGKILL)
    driver.wait(30)
    deadline = time.monotonic() + 10  # a guard: they go at once, but a busy machine is slow
    while any(Path(f"/proc/{p}").exists() and b"State:\tZ" not in _status(p)
              for p in children + servers):
        assert time.monotonic() < deadline, "the script child or a server outlived tui-agent"
        time.sleep(0.02)


def _status(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/status").read_bytes()
    except OSError:
        return b"State:\tZ"


# -- 13: the child is locked down; big values are refused by name -------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux limits and seccomp")
async def test_the_script_child_is_locked_down() -> None:
    bridge = Held(hold=True)
    running = asyncio.create_task(sandbox.run('result = calc.echo(text="1")', BINDINGS, bridge))
    await bridge.entered.wait()
    (child,) = children_of(os.getpid())
    status = Path(f"/proc/{child}/status").read_text()
    limits = Path(f"/proc/{child}/limits").read_text()
    bridge.release.set()
    assert (await running).ok
    assert "NoNewPrivs:\t1" in status and "Seccomp:\t2" in status
    rows = {line[:26].strip(): line[26:].split()[:2] for line in limits.splitlines()[1:]}
    assert rows["Max processes"] == ["0", "0"]
    assert rows["Max open files"] == ["16", "16"]
    assert rows["Max file size"] == ["0", "0"]


PROBE = """
import os, runpy, socket, sys
child = runpy.run_path(sys.argv[1])
child["harden"]({"max_cpu": 5, "max_memory_mb": 256})
for what, attempt in [("socket", lambda: socket.socket()),
                      ("execve", lambda: os.execv("/bin/true", ["true"])),
                      ("open for writing", lambda: open("/tmp/never-" + str(os.getpid()), "w"))]:
    try:
        attempt()
        print(what, "allowed")
    except OSError as exc:
        print(what, "refused:", type(exc).__name__)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux limits and seccomp")
def test_the_hardened_child_cannot_run_programs_open_sockets_or_write_files() -> None:
    probe = subprocess.run([sys.executable, "-I", "-c", PROBE, str(sandbox.CHILD)],
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "TUI_AGENT_SANDBOX_PARENT": str(os.getpid())})
    assert probe.stdout.splitlines() == [
        "socket refused: PermissionError", "execve refused: PermissionError",
        "open for writing refused: OSError" if os.geteuid() else
        "open for writing allowed"], probe.stdout + probe.stderr


async def test_a_result_over_the_transfer_limit_is_refused_by_name() -> None:
    outcome = await sandbox.run('x = calc.echo(text="big")\nresult = len(x)', BINDINGS,
                                Held("y" * (9 << 20)))
    assert outcome.text().startswith(
        "error (limit) at line 1, column 5: calc.echo returned 9,437,186 bytes (as JSON), over "
        "the 8 MB one call may bring into a script (code_mode max_transfer_mb)"), outcome.text()


async def test_a_50_mb_argument_is_named_as_the_argument() -> None:
    outcome = await sandbox.run('calc.echo(text="x" * 50000000)', BINDINGS, Held())
    assert outcome.text().startswith(
        "error (limit) at line 1, column 1: calc.echo(): its arguments are 50,000,012 bytes "
        "as JSON, over the 8 MB one call may carry out of a script (code_mode "
        "max_transfer_mb)"), outcome.text()


# -- 15: messages ---------------------------------------------------------------------

async def test_print_shows_values_as_starlark_writes_them() -> None:
    outcome = await sandbox.run('print(float("nan"), "null", ["null", None], {"k": True})\n'
                                'print("a", "b", sep="-")', {}, Held())
    assert outcome.logs == ['nan null ["null", None] {"k": True}', "a-b"]


async def test_a_bad_keyword_is_a_runtime_error_not_a_tool_error() -> None:
    class Picky(Held):
        async def call(self, key: str, name: str, arguments: dict[str, Any]) -> Any:
            raise CallFailed("runtime", f"{name}() got unexpected keyword argument(s) 'c'")

    outcome = await sandbox.run('calc.echo(c=1)', BINDINGS, Picky())
    assert outcome.text().startswith("error (runtime) at line 1, column 1: calc.echo() got "
                                     "unexpected keyword argument(s) 'c'"), outcome.text()



# -- start-up: a child started ahead ------------------------------------------------

async def wait_for_children(count: int, but: int | None = None) -> list[int]:
    deadline = time.monotonic() + 10
    while True:
        found = [p for p in children_of(os.getpid()) if p != but and "Z" not in _state(p)]
        if len(found) == count:
            return found
        assert time.monotonic() < deadline, f"expected {count} child(ren), found {found}"
        await asyncio.sleep(0.02)


def _state(pid: int) -> str:
    for line in _status(pid).decode().splitlines():
        if line.startswith("State:"):
            return line.split()[1]
    return "Z"


async def test_a_script_runs_in_the_child_started_ahead_and_the_next_is_started() -> None:
    limits = CodeModeSettings()
    spare.prepare(limits)
    try:
        (ahead,) = await wait_for_children(1)
        bridge = Held(hold=True)
        running = asyncio.create_task(sandbox.run('result = calc.echo(text="1")', BINDINGS,
                                                  bridge, limits, warm=True))
        await bridge.entered.wait()
        # The script runs in the spare (the next one may be starting already, beside it).
        assert ahead in children_of(os.getpid())
        bridge.release.set()
        assert (await running).result == "ok"
        # The spare ended with the script (had the script started a child of its own, the
        # spare would still be waiting), and the next one waits in its place.
        (following,) = await wait_for_children(1, but=ahead)
        assert following != ahead
        deadline = time.monotonic() + 10
        while ahead in children_of(os.getpid()) and "Z" not in _state(ahead):
            assert time.monotonic() < deadline, "the spare that ran the script did not end"
            await asyncio.sleep(0.02)
    finally:
        await spare.close()
    await wait_for_children(0)


async def test_a_script_that_comes_while_the_spare_starts_waits_for_it() -> None:
    """A script asked for before the spare has finished starting (its process runs, its
    pipes are not connected yet: seconds on a busy machine) runs in that spare, not in a
    second child started beside it."""
    limits = CodeModeSettings()
    spare.prepare(limits)  # its start has not even begun: this task has not yielded yet
    bridge = Held(hold=True)
    running = asyncio.create_task(sandbox.run('result = calc.echo(text="1")', BINDINGS,
                                              bridge, limits, warm=True))
    try:
        await bridge.entered.wait()
        assert len(children_of(os.getpid())) == 1, children_of(os.getpid())
        bridge.release.set()
        assert (await running).result == "ok"
    finally:
        running.cancel()  # kills its child, if an assertion above failed
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await spare.close()
    await wait_for_children(0)
