"""Server and tool metrics: calls, errors, timeouts, p50/p95 latency, restarts, breaker
trips, bytes; kept beside the session file and shown by ``servers --stats``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ROOT, TAG_VAR, fake_server
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_hub import call, eventually, hub_of
from tests.zygote import module
from tui_agent.cli import main
from tui_agent.config import paths
from tui_agent.core.session import SessionStore
from tui_agent.tools.breaker import Breaker
from tui_agent.tools.metrics import CallStats, metrics_path, percentile, summary


def test_percentiles_counts_and_the_breaker_trip_count() -> None:
    assert percentile([], 0.5) is None
    values = [i / 100 for i in range(1, 101)]  # 10 ms .. 1 s
    assert percentile(values, 0.5) == 0.5 and percentile(values, 0.95) == 0.95
    stats = CallStats()
    stats.record(0.010, "ok", 100)
    stats.record(0.020, "error", 0)
    stats.record(1.5, "timeout", 0)
    assert stats.as_dict() == {"calls": 3, "errors": 2, "timeouts": 1, "bytes": 100,
                               "p50_ms": 20.0, "p95_ms": 1500.0}
    assert summary(stats.as_dict()) == ("3 calls · 2 errors · 1 timeout · p50 20 ms · "
                                        "p95 1500 ms · 100 B")
    assert summary({**stats.as_dict(), "restarts": 1, "breaker_trips": 1}).endswith(
        "100 B · 1 restart · 1 retry pause")
    breaker = Breaker(threshold=2, cooldown=0)
    breaker.failure()
    assert breaker.trips == 0
    breaker.failure()
    assert breaker.trips == 1 and breaker.state != "closed"
    breaker.failure()  # still open: not a new trip
    assert breaker.allow()  # cooldown 0: one probe
    breaker.failure()  # the probe failed: the circuit opens again
    assert breaker.trips == 2


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_hub_counts_restarts_and_trips(tmp_path: Path) -> None:
    server = fake_server(backoff=0.2, max_attempts=1, circuit_cooldown=0.5)
    async with hub_of({"c": server}, tmp_path) as hub:
        assert (await call(hub, "c__crash"))[1]
        await eventually(lambda: hub.statuses()[0].state == "connected")
        assert await call(hub, "c__echo", text="back") == ("back", False)
        stats = hub.stats()["servers"]["c"]
        assert stats["restarts"] == 1 and stats["breaker_trips"] == 1
        assert stats["calls"] == 2 and stats["errors"] == 1
        assert stats["tools"]["echo"]["bytes"] == 4


def config_with_server(tmp_path: Path) -> Path:
    path = tmp_path / "c.toml"
    command, *argv = module("tests.fakes.mcp_server")
    path.write_text("\n".join([
        "[servers.a]", f"command = {json.dumps(command)}",
        f"args = {json.dumps(argv)}", f"cwd = {json.dumps(str(ROOT))}",
        f"env = {{ {TAG_VAR} = {json.dumps(os.environ[TAG_VAR])} }}",
        "startup_timeout = 20", "timeout = 1"]) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_run_keeps_metrics_and_servers_stats_shows_them(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run with a fast tool, a slow one, a failing one and one that times out (the
    server's timeout is 1 s); then ``servers --stats`` reads what the run kept."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("a__echo", {"text": "hello"}),
                                    FakeToolCall("a__late", {"seconds": 0.4}),
                                    FakeToolCall("a__structured_error", {}),
                                    FakeToolCall("a__hang", {})]),
                  Reply(text="done"))
    config = config_with_server(tmp_path)
    code = main(["--config", str(config), "run", "--model", "openai/fake-model",
                 "--api-base", fake_llm.base_url, "--approve", "auto", "go"])
    assert code == 0, capsys.readouterr().err
    session = SessionStore(paths.sessions_dir()).latest()
    assert session is not None
    kept = json.loads(metrics_path(session).read_text())["servers"]["a"]
    assert (kept["calls"], kept["errors"], kept["timeouts"]) == (4, 2, 1)
    assert kept["restarts"] == 0 and kept["breaker_trips"] == 0
    assert kept["tools"]["echo"]["bytes"] == 5
    assert kept["tools"]["late"]["p50_ms"] >= 400
    assert kept["tools"]["hang"]["timeouts"] == 1 and kept["tools"]["hang"]["p50_ms"] >= 1000
    assert kept["p95_ms"] >= 1000 > kept["p50_ms"]
    capsys.readouterr()

    assert main(["servers", "--stats"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"metrics of {session.stem}")
    assert out[1].startswith("a  4 calls · 2 errors · 1 timeout · p50 ")
    assert out[1].endswith("0 restarts · 0 retry pauses")
    tools = {line.split()[0]: line for line in out[2:]}
    assert set(tools) == {"echo", "hang", "late", "structured_error"}
    assert "1 call · 0 errors · 0 timeouts" in tools["echo"] and "5 B" in tools["echo"]
    assert "1 call · 1 error · 1 timeout" in tools["hang"]


def test_servers_stats_without_metrics_or_sessions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["servers", "--stats"]) == 2
    assert "there is no session" in capsys.readouterr().err
    store = SessionStore(paths.sessions_dir())
    store.directory.mkdir(parents=True, exist_ok=True)
    (store.directory / "20261122-000000-abcd.jsonl").write_text("")
    assert main(["servers", "--stats", "20261122"]) == 0
    assert "no metrics for 20261122-000000-abcd" in capsys.readouterr().out
