"""A stdio server is spawned before the MCP SDK loads in our process (it takes 1.5 s
here, and a server written with the SDK, such as the built-in one, spends as long on its
side): the two load at once. And a server spawned early whose transport never opened is
not left running."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest

from tests.conftest import ROOT, fake_server
from tui_agent.tools.server_log import STARTING
from tui_agent.tools.transports import sdk, stdio

SCRIPT = """
import asyncio, json, sys
from pathlib import Path
from tui_agent.config.models import ServerConfig
from tui_agent.tools import frontdesk, sampling
from tui_agent.tools.client import NOTHING
from tui_agent.tools.hub import Hub
from tui_agent.tools.transports import stdio

seen = {}
spawn = stdio.spawn


async def watched(*args, **kwargs):
    seen["mcp at the spawn"] = "mcp" in sys.modules
    return await spawn(*args, **kwargs)


stdio.spawn = watched


async def nothing(*args):
    return None


async def main():
    # The front end's side as the app and `run` offer it: questions, roots, sampling.
    desk = frontdesk.FrontDesk(ask=nothing, project=Path.cwd(),
                               sampler=sampling.Sampler(nothing, nothing, nothing))
    config = ServerConfig.model_validate_json(sys.argv[1])
    hub = Hub({"s": config}, log_dir=Path(sys.argv[2]),
              client_side=lambda name, c: desk.side(name, c, NOTHING))
    seen["mcp after the hub is made"] = "mcp" in sys.modules
    hub.start()
    try:
        await asyncio.wait_for(hub.wait_all(), 120)
        seen["tools"] = sorted(s.tool for s in hub.specs())
    finally:
        await hub.close()


asyncio.run(main())
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_a_stdio_server_is_spawned_before_the_sdk_loads(tmp_path: Path) -> None:
    config = fake_server().model_dump_json()
    done = subprocess.run([sys.executable, "-c", SCRIPT, config, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["mcp after the hub is made"] is False
    assert seen["mcp at the spawn"] is False
    assert "echo" in seen["tools"]  # and the server it spawned so is served as ever


def test_we_inherit_what_the_sdk_lets_a_server_inherit() -> None:
    from mcp.client import stdio as sdk_stdio

    assert list(stdio.INHERITED) == list(sdk_stdio.DEFAULT_INHERITED_ENV_VARS)


@pytest.mark.anyio
async def test_a_server_spawned_early_whose_transport_never_opened_is_killed() -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        process = await stdio.spawn(sys.executable, ["-c", "import time; time.sleep(120)"],
                                    None, None, errlog)
        assert process is not None and process.returncode is None
        await sdk._never_left(process)
        assert process.returncode is not None  # killed, with its process group, and reaped
        ended = await stdio.spawn(sys.executable, ["-c", "pass"], None, None, errlog)
        assert ended is not None
        with anyio.fail_after(60):  # a bound: `python -c pass` ends at once
            assert await ended.wait() == 0
        await sdk._never_left(ended)  # one that ended on its own is left as it is
        assert ended.returncode == 0


@pytest.mark.slow
def test_run_spawns_its_stdio_servers_first_and_charges_them_no_held_time(
        tmp_path: Path) -> None:
    """``run`` starts its stdio servers early (:meth:`Hub.start_early`), then holds the
    loop for its own set-up (here 9 s, past the server's 8 s ``startup_timeout``): the
    server is not failed for that time, and it is started once, not twice. A remote
    server waits for :meth:`Hub.start`."""
    import asyncio
    import time

    from tui_agent.config.models import ServerConfig
    from tui_agent.tools.hub import Hub

    # 8 s: time enough for the handshake after the hold, with a second suite on the CPUs.
    servers = {"s": fake_server(startup_timeout=8),
               "remote": ServerConfig(url="http://127.0.0.1:9/mcp", startup_timeout=8)}
    hub = Hub(servers, log_dir=tmp_path)
    with asyncio.Runner() as runner:
        try:
            runner.run(hub.start_early())
            assert hub.connections["s"].spawned.is_set()
            assert not hub.connections["remote"].started
            time.sleep(9)  # the run's own set-up, the loop held

            async def then() -> list[str]:
                hub.start()
                await asyncio.wait_for(hub.wait_all(), 60)
                return sorted(s.tool for s in hub.specs() if s.server == "s")

            tools = runner.run(then())
            assert hub.connections["s"].state == "connected", hub.connections["s"].last_error
            assert "echo" in tools
            assert hub.connections["remote"].state == "failed"  # started by start(), then
        finally:
            runner.run(hub.close())
    log = next(tmp_path.glob("s*.log")).read_text()
    assert log.count(f"{STARTING} s at ") == 1, log[-2000:]


def test_a_ctrl_c_out_of_the_turns_loop_lets_the_turn_end_first() -> None:
    """``run`` keeps one loop for its whole life: a Ctrl-C raised out of it (the line-mode
    chat's prompt) cancels what still runs there and waits for it (the turn's SessionEnd
    hooks, the servers' close) before the session file is closed, as leaving
    ``asyncio.run`` did."""
    import asyncio

    from tui_agent.headless.run import _wind_down

    ended: list[str] = []

    async def turn() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.01)  # an ending that awaits, as closing servers does
            ended.append("turn")

    async def begin() -> None:
        asyncio.get_running_loop().create_task(turn())
        await asyncio.sleep(0.05)

    with asyncio.Runner() as runner:
        runner.run(begin())
        assert ended == []
        _wind_down(runner)
        assert ended == ["turn"]
