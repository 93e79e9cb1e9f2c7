"""Ctrl-C while ``tui-agent servers``, ``tui-agent mcp add`` or ``tui-agent run`` starts a
server: the command stops at once with "interrupted" and exit 130, and the server's whole
process group is ended (:mod:`tui_agent.headless.stoppable`; ``run``'s own handling). The
server here starts slowly and ignores SIGTERM, the worst case: a polite close gives it 2 s
after its input ends, then SIGTERM, then 2 s more; the hurried close ends it within about
a second. Which close ran is told by the client's log (the line
:mod:`tui_agent.tools.transports.stopping` writes), not by a clock: on a busy machine no
clock tells them apart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, TAG_VAR, tagged_processes
from tests.fakes.llm_server import FakeLLM
from tests.ui.kit import write_config
from tests.zygote import TUI_AGENT

SERVER = ["--slow-start", "60", "--ignore-sigterm"]


def _command(kind: str, tmp_path: Path, fake_llm: FakeLLM) -> list[str]:
    config = tmp_path / "config.toml"
    if kind == "run":  # the turn waits for the server before it asks the model
        write_config(config, base_url=fake_llm.base_url, servers={"slow": SERVER})
        return [*TUI_AGENT, "run", "--config", str(config), "hello"]
    if kind == "servers":
        write_config(config, servers={"slow": SERVER})
        return [*TUI_AGENT, "servers", "--config", str(config)]
    write_config(config)
    return [*TUI_AGENT, "mcp", "add", "--config", str(config),
            "--env", f"{TAG_VAR}={os.environ[TAG_VAR]}", "slow", "--",
            sys.executable, "-m", "tests.fakes.mcp_server", *SERVER]


def interrupted(command: list[str], tag: str, *, processes: int, settle: float,
                signals: int) -> tuple[int, bytes, bytes]:
    """Run ``command``; once ``processes`` processes carry ``tag`` (the server has started)
    and ``settle`` seconds more have passed, send it SIGINT ``signals`` times, 0.1 s
    apart. Its exit code, stdout and stderr."""
    child = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120  # the command's start-up on a loaded machine
        while len(tagged_processes(tag)) < processes:
            assert child.poll() is None and time.monotonic() < deadline, \
                "the server never started"
            time.sleep(0.05)
        time.sleep(settle)
        for n in range(signals):
            if n:
                time.sleep(0.1)
            child.send_signal(signal.SIGINT)
        # A guard against the hang that was (45 s and more), not a speed figure.
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    return child.returncode, out, err


@pytest.mark.parametrize("kind", ["servers", "mcp add", "run"])
def test_ctrl_c_while_a_server_starts(kind: str, tmp_path: Path, fake_llm: FakeLLM,
                                      no_leftover_servers: str) -> None:
    # The server is up and starting (sleeping before it answers). The command's side of
    # the start (the transport handed over, so the hurried close applies) comes a moment
    # after the process appears: a moment of seconds at load 15 (with 0.5 s a busy run
    # once caught the spawn itself, closed by the SDK's cancellation).
    code, out, err = interrupted(_command(kind, tmp_path, fake_llm), no_leftover_servers,
                                 processes=1, settle=3, signals=1)
    assert code == 130, (out, err)
    assert b"tui-agent: interrupted" in err and b"Traceback" not in err, err
    assert not tagged_processes(no_leftover_servers), "the server outlived the command"
    logged = "".join(p.read_text() for p in (tmp_path / "home").rglob("mcp-client.log"))
    assert "closing in a hurry): SIGTERM" in logged, \
        f"the server's close was not hurried; the client's log: {logged!r}"


def test_a_second_ctrl_c_leaves_no_grandchild(tmp_path: Path, no_leftover_servers: str) -> None:
    """Two Ctrl-Cs in a row: the command leaves at once, and what the server started (a
    child of a shell here, as ``npx`` starts ``node`` through ``sh``) is killed with it,
    not left running with no parent."""
    import shlex

    from tests.ui.kit import toml_value

    # A real child of the shell (not one forked by the test zygote, which no group holds).
    server = shlex.join([sys.executable, "-m", "tests.fakes.mcp_server", *SERVER])
    config = tmp_path / "config.toml"
    config.write_text(f"[servers.wrapped]\ncommand = \"sh\"\n"
                      f"args = {toml_value(['-c', server + '; :'])}\n"
                      f"cwd = {toml_value(str(ROOT))}\n"
                      f"env = {{ {TAG_VAR} = {toml_value(os.environ[TAG_VAR])} }}\n",
                      encoding="utf-8")
    code, out, err = interrupted([*TUI_AGENT, "servers", "--config", str(config)],
                                 no_leftover_servers, processes=2,  # the shell, its child
                                 settle=0.5, signals=2)
    assert code == 130, (out, err)
    assert b"Traceback" not in err, err
    time.sleep(0.5)  # a SIGKILL is delivered at once; its reaping by PID 1 may lag
    assert not tagged_processes(no_leftover_servers), "the server's child was left running"


@pytest.mark.anyio
async def test_end_now_ends_a_server_whose_close_has_not_begun(
        tmp_path: Path, no_leftover_servers: str) -> None:
    """A second Ctrl-C may come before any close began (both handled in one pass of the
    loop, or a run whose turn is still winding down): ``end_now`` then ends every stdio
    server started and not closed, with what it started (a shell's child) too."""
    from tui_agent.config.models import ServerConfig
    from tui_agent.tools.hub import Hub
    from tui_agent.tools.transports import stopping

    server = f"{sys.executable} -m tests.fakes.mcp_server"  # itself, as the shell's child
    wrapped = ServerConfig(command="sh", args=["-c", server + "; :"], cwd=str(ROOT),
                           env={TAG_VAR: os.environ[TAG_VAR], "PYTHONPATH": str(ROOT)})
    async with Hub({"wrapped": wrapped}, log_dir=tmp_path / "logs") as hub:
        await hub.wait_all()
        assert hub.statuses()[0].state == "connected", hub.statuses()
        assert len(tagged_processes(no_leftover_servers)) == 2  # the shell and its child
        stopping.end_now()
        deadline = time.monotonic() + 10  # a SIGKILL is at once; reaping may lag
        while tagged_processes(no_leftover_servers):
            assert time.monotonic() < deadline, "end_now left the server running"
            time.sleep(0.05)
