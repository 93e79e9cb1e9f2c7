"""The hub against our hostile MCP server (tests/fakes/mcp_server.py), over real stdio.

Each misbehaviour the issue names is one test with the behaviour asserted; the
autouse ``no_leftover_servers`` fixture then checks the process table.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_server
from tui_agent.config.models import ServerConfig
from tui_agent.tools.backoff import backoff_delay
from tui_agent.tools.breaker import Breaker
from tui_agent.tools.hub import Hub
from tui_agent.tools.server_log import LOG_ROTATE_BYTES
from tui_agent.tools.spec import ToolSpec

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@asynccontextmanager
async def hub_of(servers: Mapping[str, ServerConfig], tmp_path: Path,
                 wait: bool = True) -> AsyncIterator[Hub]:
    hub = Hub(servers, log_dir=tmp_path / "logs", default_timeout=20)
    hub.start()
    try:
        if wait:
            await hub.wait_all()
        yield hub
    finally:
        await hub.close()


def spec(hub: Hub, name: str) -> ToolSpec:
    specs = {s.name: s for s in hub.specs()}
    assert name in specs, f"{name} not in {sorted(specs)}; the servers: {hub.statuses()}"
    return specs[name]


async def call(hub: Hub, name: str, **arguments: Any) -> tuple[str, bool]:
    outcome = await hub.call(spec(hub, name), arguments)
    return outcome.text, outcome.is_error


async def eventually(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_two_servers_share_one_namespaced_catalog(tmp_path: Path) -> None:
    async with hub_of({"one": fake_server(), "two": fake_server()}, tmp_path) as hub:
        names = {s.name for s in hub.specs()}
        assert {"one__echo", "two__echo", "one__add", "two__add"} <= names
        assert await call(hub, "one__echo", text="hi") == ("hi", False)
        assert await call(hub, "two__add", a=2, b=3) == ("5", False)
        states = {s.name: s.state for s in hub.statuses()}
        assert states == {"one": "connected", "two": "connected"}


async def test_start_is_in_the_background_and_a_turn_waits_and_says_so(tmp_path: Path) -> None:
    servers = {"slow": fake_server("--slow-start", "1.5")}
    started = time.monotonic()
    async with hub_of(servers, tmp_path, wait=False) as hub:
        assert time.monotonic() - started < 0.5  # starting did not block
        assert hub.statuses()[0].state == "connecting"
        notes = [note async for note in hub.prepare()]
        assert "waiting for 1 MCP server(s) still starting: slow" in notes[0]
        assert hub.statuses()[0].state == "connected", (hub.statuses()[0], notes)
        assert await call(hub, "slow__echo", text="ready") == ("ready", False)


async def test_the_wait_names_only_the_servers_still_starting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose command does not exist fails at once: the turn's "still starting"
    note leaves it out (it is told as not available), though the turn began before it
    had failed. (The note's moment is stretched from 0.3 s to 2 s here, the slow start to
    5 s: a command not found fails well within it however busy the machine.)"""
    from tui_agent.tools import hub as hub_module

    monkeypatch.setattr(hub_module, "NOTE_AFTER", 2.0)
    servers = {"slow": fake_server("--slow-start", "5", startup_timeout=30),
               "ghost": ServerConfig(command="tui-agent-test-no-such-command")}
    async with hub_of(servers, tmp_path, wait=False) as hub:
        notes = [note async for note in hub.prepare()]
        assert notes[0].startswith("waiting for 1 MCP server(s) still starting: slow "), notes
        assert any(n.startswith("MCP server 'ghost' is not available") for n in notes), notes


async def test_a_server_that_takes_20_s_to_start_fails_alone(tmp_path: Path) -> None:
    servers = {"sluggish": fake_server("--slow-start", "20", startup_timeout=1.0),
               "fine": fake_server()}
    started = time.monotonic()
    async with hub_of(servers, tmp_path, wait=False) as hub:
        notes = [note async for note in hub.prepare()]
        waited = time.monotonic() - started
        assert waited < 5, "the turn waited beyond the start-up timeout"
        status = {s.name: s for s in hub.statuses()}
        assert status["sluggish"].state == "failed"
        assert "did not start within 1 s" in (status["sluggish"].last_error or "")
        assert any("sluggish" in n and "not available" in n for n in notes)
        assert await call(hub, "fine__echo", text="still here") == ("still here", False)
        assert not any(s.server == "sluggish" for s in hub.specs())


async def test_missing_command_is_a_clear_failure(tmp_path: Path) -> None:
    async with hub_of({"ghost": ServerConfig(command="no-such-mcp-server-here")},
                      tmp_path) as hub:
        status = hub.statuses()[0]
        assert status.state == "failed"
        assert status.last_error is not None
        assert "command not found: no-such-mcp-server-here" in status.last_error


async def test_crash_mid_call_is_an_error_then_the_server_restarts(tmp_path: Path) -> None:
    async with hub_of({"c": fake_server(backoff=0.2)}, tmp_path) as hub:
        text, is_error = await call(hub, "c__crash")
        assert is_error
        assert "lost the connection during the call" in text
        assert "may or may not have taken effect" in text
        await eventually(lambda: hub.statuses()[0].state == "connected")
        assert hub.statuses()[0].restarts == 1
        assert await call(hub, "c__echo", text="back") == ("back", False)


async def test_a_read_only_tool_is_retried_once_after_a_drop(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    async with hub_of({"c": fake_server("--marks", str(marks), backoff=0.2)}, tmp_path) as hub:
        assert await call(hub, "c__crash_once") == ("second try worked", False)
        assert len((marks / "crash_once").read_text().splitlines()) == 2


async def test_hang_times_out_and_the_server_is_told_to_cancel(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    async with hub_of({"h": fake_server("--marks", str(marks), timeout=2)}, tmp_path) as hub:
        started = time.monotonic()
        text, is_error = await call(hub, "h__hang")
        assert is_error
        assert "did not answer within 2 s" in text
        assert time.monotonic() - started < 6
        await eventually(lambda: (marks / "cancelled").exists())  # notifications/cancelled
        assert await call(hub, "h__echo", text="usable") == ("usable", False)


async def test_a_late_reply_is_ignored(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    async with hub_of({"l": fake_server("--marks", str(marks), timeout=1.0)}, tmp_path) as hub:
        text, is_error = await call(hub, "l__late", seconds=2.0)
        assert is_error
        assert "did not answer" in text
        await eventually(lambda: (marks / "late").exists())
        await asyncio.sleep(0.2)  # the late answer arrives now, for a request nobody awaits
        assert await call(hub, "l__echo", text="mine") == ("mine", False)
        assert hub.statuses()[0].state == "connected"


async def test_progress_extends_the_timeout_up_to_the_cap(tmp_path: Path) -> None:
    servers = {"p": fake_server(timeout=1.2, max_call_time=4.5)}
    async with hub_of(servers, tmp_path) as hub:
        # 3 s of work, with progress every 0.25 s: longer than the 1.2 s timeout.
        assert await call(hub, "p__progress", total=3, every=0.25) == (
            "done after 12 steps", False)
        text, is_error = await call(hub, "p__progress", total=10, every=0.25)
        assert is_error
        assert "did not answer within 4.5 s" in text


async def test_cancelling_a_call_cancels_it_on_the_server(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    async with hub_of({"h": fake_server("--marks", str(marks))}, tmp_path) as hub:
        task = asyncio.create_task(hub.call(spec(hub, "h__hang"), {}))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await eventually(lambda: (marks / "cancelled").exists())


async def test_escape_sequences_never_come_through(tmp_path: Path) -> None:
    async with hub_of({"e": fake_server()}, tmp_path) as hub:
        text, is_error = await call(hub, "e__escapes")
        assert not is_error
        assert "wiped" in text
        assert "done" in text
        for bad in ("\x1b", "\x07", "\x9b", "\u202e", "]52;", "]8;"):
            assert bad not in text


async def test_a_malformed_line_is_logged_and_the_session_goes_on(tmp_path: Path) -> None:
    async with hub_of({"g": fake_server(), "b": fake_server("--banner", "Hello, I am a banner")},
                      tmp_path) as hub:
        assert await call(hub, "g__garbage") == ("answered anyway", False)
        assert await call(hub, "g__echo", text="after") == ("after", False)
        log = (tmp_path / "logs" / "g.log").read_text()
        assert "not JSON-RPC" in log
        assert hub.statuses()[1].state == "connected"  # a banner on stdout is survived too


async def test_a_stderr_flood_neither_blocks_nor_reaches_the_terminal(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    async with hub_of({"f": fake_server("--stderr-flood", "1000000")}, tmp_path) as hub:
        assert await call(hub, "f__shout", size=1_100_000) == ("shouted", False)
        status = hub.statuses()[0]
        assert status.state == "connected"
        assert 0 < len(status.stderr) <= 20 and status.stderr[-1] == "x" * 99
        # 2.1 MB written in one session: rotated while the server writes, not at its next start
        assert (logs / "f.log").stat().st_size <= LOG_ROTATE_BYTES + 65_536 + 200
        assert (logs / "f.log.1").stat().st_size > LOG_ROTATE_BYTES
        assert (logs / "f.log").read_text().startswith("--- tui-agent: rotated, earlier lines "
                                                       "are in f.log.1 ---\n")
    out, err = capfd.readouterr()
    assert "EEEE" not in err and "xxxx" not in err


async def test_ten_megabytes_come_back_whole_from_the_hub(tmp_path: Path) -> None:
    async with hub_of({"b": fake_server()}, tmp_path) as hub:
        text, is_error = await call(hub, "b__big", size=10_000_000)
        assert not is_error
        assert len(text) == 10_000_000  # the agent caps it for the model (test_agent_tools)


async def test_shutdown_with_a_server_that_ignores_sigterm(tmp_path: Path,
                                                           no_leftover_servers: str) -> None:
    from tests.conftest import tagged_processes

    servers = {"stubborn": fake_server("--ignore-sigterm"), "fine": fake_server()}
    hub = Hub(servers, log_dir=tmp_path / "logs")
    hub.start()
    await hub.wait_all()
    assert len(tagged_processes(no_leftover_servers)) == 2
    started = time.monotonic()
    await hub.close()
    assert time.monotonic() - started < 5
    assert tagged_processes(no_leftover_servers) == []


async def test_circuit_opens_after_three_failures_and_half_opens(tmp_path: Path) -> None:
    servers = {"h": fake_server(timeout=1.0, circuit_cooldown=1.0)}
    async with hub_of(servers, tmp_path) as hub:
        for _ in range(3):
            text, is_error = await call(hub, "h__hang")
            assert is_error and "did not answer" in text
        started = time.monotonic()
        text, is_error = await call(hub, "h__echo", text="x")
        assert is_error
        assert "paused after 3 failures in a row; reconnecting the server tries it at once" in text
        assert time.monotonic() - started < 0.1  # failed fast
        await asyncio.sleep(1.1)
        assert await call(hub, "h__echo", text="probe") == ("probe", False)
        assert hub.connections["h"].breaker.state == "closed"


async def test_a_frozen_server_is_found_stale_and_restarted(tmp_path: Path) -> None:
    servers = {"z": fake_server(heartbeat_interval=0.2, stale_timeout=2.0, timeout=1.0,
                                backoff=0.1)}
    async with hub_of(servers, tmp_path) as hub:
        text, is_error = await call(hub, "z__freeze", seconds=30)
        assert is_error  # the call timed out; the heartbeat then finds the server silent
        await eventually(lambda: hub.connections["z"].restarts >= 1, timeout=8)
        await eventually(lambda: hub.statuses()[0].state == "connected", timeout=8)
        assert "no answer for" in (hub.statuses()[0].last_error or "")
        assert await call(hub, "z__echo", text="fresh") == ("fresh", False)


async def test_list_changed_refreshes_the_catalog(tmp_path: Path) -> None:
    for protocol in ("auto", "legacy"):
        async with hub_of({"r": fake_server(protocol=protocol)}, tmp_path) as hub:
            before = spec(hub, "r__echo")
            assert await call(hub, "r__rug") == ("changed", False)
            await eventually(lambda h=hub, b=before: spec(h, "r__echo").fingerprint
                             != b.fingerprint, timeout=5)
            assert "IGNORE PREVIOUS" in spec(hub, "r__echo").description
            # A call approved against the old definition is refused, not run.
            outcome = await hub.call(before, {"text": "x"})
            assert outcome.is_error
            assert "changed the definition" in outcome.text


async def test_resources_and_prompts(tmp_path: Path) -> None:
    async with hub_of({"f": fake_server()}, tmp_path) as hub:
        resources = await hub.resources()
        assert [r.uri for r in resources[0].items] == ["fake://hello"]
        templates = await hub.resource_templates()
        assert templates[0].items[0].uri_template == "fake://items/{item_id}"
        assert await hub.read_resource("f", "fake://hello") == "hello from the fake server"
        assert await hub.read_resource("f", "fake://items/42") == "item 42"
        prompts = await hub.prompts()
        assert prompts[0].items[0].name == "greet"
        assert await hub.get_prompt("f", "greet", {"name": "Ada"}) == [
            ("user", "Say hello to Ada.")]


async def test_disabled_server_is_not_started(tmp_path: Path) -> None:
    async with hub_of({"off": fake_server(disabled=True)}, tmp_path) as hub:
        assert hub.statuses()[0].state == "disabled"
        assert hub.specs() == []


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    for attempt, nominal in ((1, 1.0), (2, 2.0), (3, 4.0), (10, 30.0)):
        delays = [backoff_delay(attempt, 1.0) for _ in range(50)]
        assert all(0.8 * nominal <= d <= 1.2 * nominal for d in delays)
        assert len(set(delays)) > 1


def test_breaker_states() -> None:
    breaker = Breaker(threshold=3, cooldown=0.05)
    for _ in range(2):
        breaker.failure()
    assert breaker.allow() and breaker.state == "closed"
    breaker.failure()
    assert breaker.state == "open" and not breaker.allow()
    time.sleep(0.06)
    assert breaker.allow()  # the one probe
    assert not breaker.allow()  # and only one
    breaker.failure()
    assert breaker.state == "open"
    time.sleep(0.06)
    assert breaker.allow()
    breaker.success()
    assert breaker.state == "closed" and breaker.allow()


async def test_a_lazy_server_starts_for_the_first_turn_and_stops_when_idle(
        tmp_path: Path, no_leftover_servers: str) -> None:
    from tests.conftest import tagged_processes

    servers = {"l": fake_server(lazy=True, idle_timeout=0.5)}
    async with hub_of(servers, tmp_path, wait=False) as hub:
        await asyncio.sleep(0.5)
        assert hub.statuses()[0].state == "idle"
        assert tagged_processes(no_leftover_servers) == []  # not started with the hub
        notes = [note async for note in hub.prepare()]  # the first turn starts it
        # and waits for it (a start quicker than NOTE_AFTER is not announced).
        assert hub.statuses()[0].state == "connected"
        assert notes in ([], [f"waiting for 1 MCP server(s) still starting: l (up to "
                              f"{servers['l'].startup_timeout:g} s)"]), notes
        assert await call(hub, "l__echo", text="one") == ("one", False)
        await eventually(lambda: hub.statuses()[0].state == "idle", timeout=10)
        await eventually(lambda: tagged_processes(no_leftover_servers) == [], timeout=10)
        assert len(hub.specs()) == 18  # still offered (16 tools, and its two resource tools)
        assert await call(hub, "l__echo", text="two") == ("two", False)  # starts it again
        # A call in the moment it goes idle, while the old process is still closing.
        await eventually(lambda: hub.statuses()[0].state == "idle", timeout=10)
        assert await call(hub, "l__echo", text="three") == ("three", False)
        await eventually(lambda: hub.statuses()[0].state == "idle", timeout=10)
        hub.connections["l"].reconnect()  # the servers screen's "r" starts an idle server
        await eventually(lambda: hub.statuses()[0].state == "connected", timeout=10)
        assert hub.statuses()[0].restarts == 0
