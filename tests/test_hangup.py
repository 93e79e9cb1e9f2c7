"""The terminal going away (a closed window, a dropped SSH session, a killed tmux) ends
the app within seconds, every time, with its servers stopped: through the real command
on a real pseudo-terminal whose other end is closed at each moment of start-up and of
a reply."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FAKE_MODEL, ROOT, TAG_VAR, need, tagged_processes
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import NPM_DIR, everything
from tests.test_shutdown import STREAM, Terminal, latest_session
from tests.test_terminal import read_until
from tests.ui.kit import toml_value, write_config
from tests.waits import kill_pid

pytestmark = pytest.mark.slow

EXIT_WITHIN = 5.0
"""Seconds the test allows (the app itself takes well under 2 s; this is a shared machine)."""


def hang_up(term: Terminal) -> float:
    """Close the terminal's other end, as a closed window does; how long the app took to
    end (it is killed and the test fails if it outlives ``EXIT_WITHIN``)."""
    os.close(term.fd)
    started = time.monotonic()
    while time.monotonic() - started < EXIT_WITHIN:
        pid, _ = os.waitpid(term.pid, os.WNOHANG)
        if pid:
            return time.monotonic() - started
        time.sleep(0.02)
    kill_pid(term.pid)
    raise AssertionError(f"the app was still running {EXIT_WITHIN:g} s after its terminal "
                         "went away")


def settle(tag: str) -> list[int]:
    deadline = time.monotonic() + 3
    while (left := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("servers", [True, False], ids=["with-servers", "no-servers"])
@pytest.mark.parametrize("after", [0.0, 0.15, 0.4, "first-frame"])
def test_the_app_ends_when_its_terminal_goes(servers: bool, after: float | str,
                                             fake_llm: FakeLLM, tmp_path: Path,
                                             no_leftover_servers: str) -> None:
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          servers={"a": [], "b": []} if servers else None)
    term = Terminal("--config", str(config))
    if after == "first-frame":
        term.wait_for(FAKE_MODEL.encode())
    else:
        assert isinstance(after, float)
        time.sleep(after)
    hang_up(term)
    assert not settle(no_leftover_servers), "a server outlived the app"


def test_the_app_ends_when_its_terminal_goes_mid_reply(fake_llm: FakeLLM, tmp_path: Path,
                                                       no_leftover_servers: str) -> None:
    fake_llm.push(STREAM, Reply(text="unused"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, servers={"a": []})
    term = Terminal("--config", str(config))
    term.wait_for(FAKE_MODEL.encode())
    time.sleep(0.3)
    term.type(b"hello\r")
    term.wait_for(b"streaming word")
    hang_up(term)
    assert not settle(no_leftover_servers), "a server outlived the app"
    last = latest_session().entries[-1]
    assert last.message["role"] == "assistant" and last.incomplete


def _own_cpu(pid: int) -> tuple[float, str]:
    """The seconds of CPU ``pid`` itself used (its children's not counted) and its state
    (``Z`` once it has exited: the figures are then final)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), fields[0]


def _own_server(app: int, servers: list[int]) -> int:
    """The server the app started itself (the others are its children): the leader of
    their process group."""
    for pid in servers:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(app):
            return pid
    raise AssertionError("no server is the app's own child")


def _stdin_pipe(app: int, servers: list[int]) -> str:
    """The pipe the app writes to its server through (the server's standard input)."""
    return os.readlink(f"/proc/{_own_server(app, servers)}/fd/0")


def _holds(pid: int, target: str) -> bool:
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            if os.readlink(fd) == target:
                return True
    return False


def test_an_npx_server_that_outlives_its_input_does_not_hold_the_exit(
        fake_llm: FakeLLM, tmp_path: Path, no_leftover_servers: str) -> None:
    """server-everything started through ``npx`` (npm, sh, node), with its simulated
    logging on so that the end of its input does not end it (a timer keeps node alive).
    The terminal goes away: the server is stopped soon after its input ends, not after
    the SDK's polite 2 s (then up to 2 s more, waiting for an orphaned node to be
    reaped), and the app does not spin on the dead terminal meanwhile (its input thread
    ran a core, two with the SIGCONT a killed tmux sends)."""
    need(shutil.which("npx") is not None, "npx")
    everything()  # installs the npm servers, which npx then finds in tests/npm
    fake_llm.push(Reply(tool_calls=[FakeToolCall("everything__toggle-simulated-logging", {},
                                                 id="t1")]),
                  Reply(text="simulated logging is on"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra=(
        '\n[servers.everything]\ncommand = "npx"\n'
        'args = ["-y", "@modelcontextprotocol/server-everything"]\n'
        f"cwd = {toml_value(str(NPM_DIR))}\n"
        f"env = {{ {TAG_VAR} = {toml_value(no_leftover_servers)} }}\n"
        'auto = ["*"]\nstartup_timeout = 60\n'))
    term = Terminal("--config", str(config))
    term.wait_for(b"1/1 servers")
    term.type(b"log please\r")
    term.wait_for(b"logging is on")
    servers = tagged_processes(no_leftover_servers)
    assert len(servers) >= 2, "npx and the node it started should both run"
    pipe, leader = _stdin_pipe(term.pid, servers), _own_server(term.pid, servers)
    cpu_before, _ = _own_cpu(term.pid)
    os.close(term.fd)
    started = time.monotonic()
    input_ended = servers_gone = app_gone = None
    while app_gone is None and time.monotonic() - started < 10:
        cpu, state = _own_cpu(term.pid)
        now = time.monotonic() - started
        if input_ended is None and not _holds(term.pid, pipe):
            input_ended = now
        if servers_gone is None and not tagged_processes(no_leftover_servers):
            servers_gone = now
        if state == "Z":
            app_gone = now
        time.sleep(0.02)
    kill_pid(term.pid)  # reaps the zombie; ends an app that hung
    assert app_gone is not None, "the app was still running 10 s after its terminal went"
    assert not settle(no_leftover_servers), "a server outlived the app"
    assert input_ended is not None and servers_gone is not None
    # The SDK alone gives a server 2 s after the end of its input before its SIGTERM; the
    # app in a hurry sends its own after 0.5 s (about 0.6 s in all, idle), and notes it in
    # the client log. A clock cannot tell the two apart on a busy machine (2.05 s was seen
    # with two suites on two CPUs); the note can. The clocks only rule out a hang.
    log = (tmp_path / "home" / "state" / "tui-agent" / "logs" / "mcp-client.log").read_text()
    assert f"process group {leader} still ran" in log and "SIGTERM" in log, log
    # The README's 2 s is measured idle; on a shared machine (4.4 s at load 11) these
    # bounds only rule out a hang, which the 10 s loop would meet.
    assert servers_gone - input_ended < 8.0, (input_ended, servers_gone)
    assert app_gone < 8.0
    assert cpu - cpu_before < 0.6 + 0.1 * app_gone, "the app spun while it closed"


def test_a_stray_sigcont_does_not_start_the_terminal_a_second_time(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A killed tmux sends SIGCONT with its SIGHUP (so does ``kill -CONT``). Textual took
    any SIGCONT for the end of a suspend and started the terminal again: a second pair of
    input and output threads (both spun on a hung-up terminal) and a second switch to the
    alternate screen. Only the app's own suspend (ctrl+z) is resumed."""
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url)
    term = Terminal("--config", str(config))
    term.wait_for(FAKE_MODEL.encode())
    os.kill(term.pid, signal.SIGCONT)
    term.type(b"still here")
    term.wait_for(b"still here")
    term.type(b"\x11")  # ctrl+q
    assert term.end() == 0
    assert term.seen.count(b"\x1b[?1049h") == 1, "the terminal was started twice"


def _pipes(pid: int) -> set[str]:
    links = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            links.add(os.readlink(fd))
    return {link for link in links if link.startswith("pipe:")}


def _runs(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_terminal_lost_while_the_servers_close_hurries_them(
        fake_llm: FakeLLM, tmp_path: Path, no_leftover_servers: str) -> None:
    """The quit key, then the terminal goes while a server that ignores the end of its
    input and SIGTERM is being closed. The app is not the terminal's session leader here
    (a terminal that goes without a SIGHUP): the input thread and the poll notice, and the
    close under way is hurried (0.5 s, then 0.5 s), not the SDK's polite 2 s and 2 s."""
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          servers={"stubborn": ["--ignore-sigterm"]})
    master, slave = os.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm-256color", COLUMNS="100",
               LINES="30")
    app = subprocess.Popen([sys.executable, "-m", "tui_agent", "--config", str(config)],
                           stdin=slave, stdout=slave, stderr=slave, env=env,
                           start_new_session=True)  # no controlling terminal: no SIGHUP
    os.close(slave)
    try:
        read_until(master, b"1/1 servers", timeout=30)
        [server] = [pid for pid in tagged_processes(no_leftover_servers)
                    if b"tests.fakes.mcp_server" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        shared = _pipes(app.pid) & _pipes(server)  # its input and its output
        os.write(master, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 10
        while shared <= _pipes(app.pid):  # the server's close has begun: its input ended
            assert time.monotonic() < deadline, "the quit key did not close the server"
            time.sleep(0.01)
        input_ended = time.monotonic()
        os.close(master)
        master = -1
        while _runs(server) and time.monotonic() < deadline:
            time.sleep(0.01)
        servers_gone = time.monotonic() - input_ended
        app.wait(timeout=10)
    finally:
        if master >= 0:
            os.close(master)
        app.kill()
        app.wait(30)
    # Unhurried: 2 s after the end of its input, then 2 s after SIGTERM (about 4 s).
    assert servers_gone < 2.0, servers_gone
