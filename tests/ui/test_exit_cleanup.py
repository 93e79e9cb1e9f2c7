"""However the app ends, the servers it started end with it. A pilot test that failed
inside ``run_test`` left the app without the quit key, and its MCP server ran on until
the leftover check killed it (a failed script-approval test left server-filesystem)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import tagged_processes
from tests.ui.kit import SIZE, make_app, ready, write_config

pytestmark = pytest.mark.anyio


class Failed(Exception):
    """The test body's failure, raised on purpose inside the pilot."""


def still_running(tag: str, timeout: float = 10) -> list[int]:
    """The tagged processes left once they had ``timeout`` seconds to end."""
    deadline = time.monotonic() + timeout
    while (left := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


async def test_a_pilot_left_on_a_failure_closes_the_apps_servers(
        tmp_path: Path, no_leftover_servers: str) -> None:
    app = make_app(write_config(tmp_path / "c.toml", servers={"r": []}))
    with pytest.raises(Failed):
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            assert app.backend.hub is not None
            assert app.backend.hub.connections["r"].state == "connected"
            assert tagged_processes(no_leftover_servers), "the server is not running"
            raise Failed
    assert still_running(no_leftover_servers) == []
