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

import pytest

from tests.conftest import ROOT, fake_server
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
        assert await ended.wait() == 0
        await sdk._never_left(ended)  # one that ended on its own is left as it is
        assert ended.returncode == 0
