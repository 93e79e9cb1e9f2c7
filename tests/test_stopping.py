"""A stdio server's close once the terminal went away (``tools/transports/stopping.py``):
against the installed ``mcp`` SDK and our fake server that ignores both the end of its
input and SIGTERM, the close is hurried well under the 2 s the app has, and the pid the
watcher needs is still where the SDK keeps it."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client import stdio

from tests.conftest import ROOT, fake_server, tagged_env, tagged_processes
from tui_agent.tools.transports import sdk, stopping
from tui_agent.tools.transports.stdio import stdio_client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HURRIED_WITHIN = 1.6
"""Seconds a hurried close may take (0.5 s after the end of input, 0.5 s after SIGTERM;
unhurried it takes the SDK's 2 s and 2 s)."""


@pytest.fixture
def unhurried(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``stopping.hurry()`` holds for the rest of a process: put everything it changes
    back after the test."""
    monkeypatch.setattr(stopping, "_hurried", False)
    monkeypatch.setattr(stopping, "_blind", False)
    for name in ("PROCESS_TERMINATION_TIMEOUT", "FORCE_KILL_TIMEOUT"):
        monkeypatch.setattr(stdio, name, getattr(stdio, name))
    yield


async def test_our_stdio_transport_holds_its_server_s_pid_where_we_read_it(
        tmp_path: Path, no_leftover_servers: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "tests.fakes.mcp_server"],
                                   cwd=str(ROOT), env=tagged_env())
    with (tmp_path / "err.log").open("w") as errlog:
        transport = stdio_client(params, errlog=errlog)
        await transport.__aenter__()
        try:
            pid = sdk.server_pid(transport)
            assert isinstance(pid, int)
            assert pid in tagged_processes(no_leftover_servers)
            assert os.getpgid(pid) == pid  # a group leader: the watcher signals its group
        finally:
            await transport.__aexit__(None, None, None)


async def close_hurried(tmp_path: Path, tag: str) -> float:
    """Seconds the close of a server that ignores the end of its input and SIGTERM takes
    once the app is in a hurry; the server is gone by then."""
    config = fake_server("--ignore-sigterm")
    with (tmp_path / "err.log").open("w") as errlog:
        async with AsyncExitStack() as stack:
            transport = await sdk.open_transport(config, stack, errlog, lambda *_: None)
            async with transport as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()  # SIGTERM is ignored from here on
                stopping.hurry()
                started = time.monotonic()
            took = time.monotonic() - started
    assert tagged_processes(tag) == []
    return took


async def test_a_hurried_close_of_a_stubborn_server_is_quick(
        tmp_path: Path, no_leftover_servers: str, unhurried: None,
        caplog: pytest.LogCaptureFixture) -> None:
    took = await close_hurried(tmp_path, no_leftover_servers)
    assert took < HURRIED_WITHIN, took
    assert "no pid found" not in caplog.text


async def test_without_the_pid_the_sdk_s_own_waits_are_hurried(
        tmp_path: Path, no_leftover_servers: str, unhurried: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the SDK had renamed what the watcher reads: a warning, and the close is
    still quick (the SDK's own waits, shortened; 4 s without them). The warning is read
    from the module's own logger: once an earlier test routed it to a log file, it no
    longer reaches the root logger that caplog listens on."""
    monkeypatch.setattr(sdk, "server_pid", lambda transport: None)
    kept = Kept()
    sdk.log.addHandler(kept)
    try:
        took = await close_hurried(tmp_path, no_leftover_servers)
    finally:
        sdk.log.removeHandler(kept)
    assert took < HURRIED_WITHIN, took
    assert any("no pid found for a stdio server" in r.getMessage() for r in kept.records)


class Kept(logging.Handler):
    """The warnings a logger gives, kept."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
