"""What a server tells while it works: each progress report of a call reaches that call
(the turn's ``progress`` events, the card's bar), each line it logs reaches the hub's
listeners and the servers screen's log, a warning or worse also the call in flight, and
``log_level`` is what the server is asked to send. Against our asking server (the SDK's),
in both protocols, and through ``tui-agent run --output jsonl [--verbose]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_client_side import asking_server
from tests.test_elicitation import asking_config, run
from tui_agent.tools.client import ClientSide
from tui_agent.tools.frontdesk import FrontDesk
from tui_agent.tools.hub import Hub
from tui_agent.tools.news import CALL_NEWS, LogLine, Progress, TaskNews

pytestmark = pytest.mark.slow


@pytest.mark.anyio
@pytest.mark.parametrize(("protocol", "level", "logged"), [
    ("legacy", None, ["debug", "info", "warning"]),  # this server takes no setLevel
    ("auto", None, []),  # 2026-07-28: a server logs only what a request asks for
    ("auto", "warning", ["warning"]),
])
async def test_progress_and_logs_reach_the_call_and_the_hub(
        tmp_path: Path, protocol: str, level: str | None, logged: list[str]) -> None:
    config = asking_server().model_copy(update={"protocol": protocol, "log_level": level})
    desk = FrontDesk()
    async with Hub({"a": config}, log_dir=tmp_path / "logs", default_timeout=20,
                   client_side=lambda n, c: desk.side(n, c, ClientSide())) as hub:
        await hub.wait_all()
        lines: list[LogLine] = []
        hub.log_listeners.append(lines.append)
        news: list[Progress | LogLine | TaskNews] = []
        token = CALL_NEWS.set(news.append)
        try:
            outcome = await hub.call(next(s for s in hub.specs() if s.tool == "chatty"), {})
        finally:
            CALL_NEWS.reset(token)
        assert (outcome.text, outcome.is_error) == ("talked", False)
        assert [line.level for line in lines] == logged
        assert all(line.server == "a" and line.logger == "chatty" for line in lines)
        steps = [n for n in news if isinstance(n, Progress)]
        assert steps == [Progress(float(i), 3.0, f"step {i} of 3") for i in (1, 2, 3)]
        severe = [n.text for n in news if isinstance(n, LogLine)]
        assert severe == (["step 3 said warning"] if "warning" in logged else [])
        status = hub.statuses()[0]
        assert status.logs == tuple(f"{lv}: step {i} said {lv}" for i, lv in
                                    enumerate(("debug", "info", "warning"), 1) if lv in logged)


def test_a_headless_run_reports_progress_and_with_verbose_the_logs(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    for verbose in (False, True):
        fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__chatty", {}, id="c")]),
                      Reply(text="ok"))
        conf = asking_config(tmp_path, fake_llm, protocol="legacy")
        done = run(conf, *(["--verbose"] if verbose else []), "talk")
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()]
        progress = [e for e in events if e["type"] == "progress"]
        assert progress == [{"type": "progress", "id": "c", "progress": float(i), "total": 3.0,
                             "message": f"step {i} of 3"} for i in (1, 2, 3)]
        logs = [(e["server"], e["level"], e["text"], e["id"]) for e in events
                if e["type"] == "server_log"]
        assert logs == ([("asking", lv, f"step {i} said {lv}", None) for i, lv in
                         enumerate(("debug", "info", "warning"), 1)] if verbose else [])
