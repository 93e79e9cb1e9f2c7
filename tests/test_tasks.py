"""Tools that run as tasks (SEP-1686), through the hub, against real servers over stdio:
ours (tests/fakes/task_server.py: one that works in steps, one that fails, one that runs
until it is cancelled, one that may run as a task) and server-everything's
``simulate-research-query``. What the server saw is read from its marks file."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, tagged_env
from tests.test_hub import call, spec
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide
from tui_agent.tools.hub import ClientSides, Hub
from tui_agent.tools.news import CALL_NEWS, LogLine, Progress, TaskNews

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def task_server(marks: Path, *args: str, **config: Any) -> ServerConfig:
    """tests/fakes/task_server.py over stdio (2025-11-25, where tasks are in the core)."""
    return ServerConfig(command=sys.executable,
                        args=[str(ROOT / "tests" / "fakes" / "task_server.py"),
                              "--marks", str(marks), *args],
                        env=tagged_env(), protocol="legacy", **config)


def seen(marks: Path, method: str | None = None) -> list[dict[str, Any]]:
    """What the server was asked, in order (``method``: only those)."""
    if not marks.exists():
        return []
    lines = [json.loads(line) for line in marks.read_text().splitlines()]
    return [m for m in lines if method is None or m["method"] == method]


@asynccontextmanager
async def hub_of(servers: Mapping[str, ServerConfig], tmp_path: Path,
                 client_side: ClientSides | None = None) -> AsyncIterator[Hub]:
    async with Hub(servers, log_dir=tmp_path / "logs", default_timeout=20,
                   client_side=client_side) as hub:
        await hub.wait_all()
        yield hub


async def told(hub: Hub, name: str, **arguments: Any
               ) -> tuple[tuple[str, bool], list[Progress | LogLine | TaskNews]]:
    """A call's outcome and the news it brought (as the chat loop hears it)."""
    news: list[Progress | LogLine | TaskNews] = []
    token = CALL_NEWS.set(news.append)
    try:
        return await call(hub, name, **arguments), news
    finally:
        CALL_NEWS.reset(token)


async def test_a_task_tool_is_polled_to_its_result_with_status_and_progress(
        tmp_path: Path) -> None:
    """``research`` needs a task: it is offered, called with a ``task`` param, its status
    messages and progress reach the caller as they change, and the result comes through
    ``tasks/result``. (Each step waits for a poll to have seen it: polls at the server's
    pollInterval may miss a step's status on a busy machine, as they may in life.)"""
    marks = tmp_path / "marks"
    async with hub_of({"t": task_server(marks, "--step-until-seen")}, tmp_path) as hub:
        outcome, news = await told(hub, "t__research", topic="owls", steps=3)
    assert outcome == ("researched owls in 3 steps", False)
    statuses = [(n.status, n.message) for n in news if isinstance(n, TaskNews)]
    assert statuses[0][0] == "working"  # the task as created: step 1 may have begun by then
    assert [s for s in statuses if s != ("working", None)] == \
        [("working", f"step {n} of 3") for n in (1, 2, 3)] + [("completed", None)]
    assert [(p.progress, p.total, p.message) for p in news if isinstance(p, Progress)] == \
        [(float(n), 3.0, f"step {n}") for n in (1, 2, 3)]
    task_ids = {n.task_id for n in news if isinstance(n, TaskNews)}
    assert len(task_ids) == 1
    assert [(m["tool"], m["task"]) for m in seen(marks, "tools/call")] == [("research", True)]
    assert [m["task"] for m in seen(marks, "tasks/result")] == list(task_ids)


async def test_polling_honours_the_servers_poll_interval(tmp_path: Path) -> None:
    """One server asks for 1.5 s between looks, another for 0.1 s (both unlike our own
    default of 1 s): no two ``tasks/get`` of the first come closer than asked (allowing
    for the server's clock), and the second is looked at several times a second."""
    slow, quick = tmp_path / "slow", tmp_path / "quick"
    servers = {"slow": task_server(slow, "--poll-ms", "1500", "--step", "0.6"),
               "quick": task_server(quick, "--poll-ms", "100", "--step", "0.3")}
    async with hub_of(servers, tmp_path) as hub:
        outcomes = await asyncio.gather(call(hub, "slow__research", steps=5),
                                        call(hub, "quick__research", steps=5))
    assert [is_error for _, is_error in outcomes] == [False, False]
    gets = [m["t"] for m in seen(slow, "tasks/get")]
    assert len(gets) >= 2, gets
    assert min(b - a for a, b in zip(gets, gets[1:], strict=False)) >= 1.4, gets
    assert len(seen(quick, "tasks/get")) >= 5  # 1.5 s of work, looked at every 0.1 s


async def test_a_task_that_fails_is_an_error_with_the_servers_words(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    async with hub_of({"t": task_server(marks)}, tmp_path) as hub:
        (text, is_error), news = await told(hub, "t__doomed")
    assert is_error and "the index is gone" in text, text
    assert [n.status for n in news if isinstance(n, TaskNews)][-1] == "failed"
    assert not seen(marks, "tasks/cancel")  # an ended task is not cancelled


async def test_a_cancelled_call_cancels_its_task_on_the_server(tmp_path: Path) -> None:
    """Cancelling the call (what Esc and a turn's stop do) sends ``tasks/cancel`` for its
    task before the call lets go."""
    marks = tmp_path / "marks"
    async with hub_of({"t": task_server(marks)}, tmp_path) as hub:
        news: list[Any] = []
        token = CALL_NEWS.set(news.append)
        running = asyncio.create_task(hub.call(spec(hub, "t__endless"), {}))
        CALL_NEWS.reset(token)
        for _ in range(200):
            if seen(marks, "tasks/get"):
                break
            await asyncio.sleep(0.05)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        cancels = seen(marks, "tasks/cancel")
        assert [c["task"] for c in cancels] == [seen(marks, "tasks/get")[0]["task"]]


async def test_a_task_past_its_time_limit_is_cancelled_and_said_so(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    async with hub_of({"t": task_server(marks, max_call_time=1.0)}, tmp_path) as hub:
        text, is_error = await call(hub, "t__endless")
    assert is_error and "did not answer within 1 s" in text, text
    assert len(seen(marks, "tasks/cancel")) == 1


async def test_a_tool_that_may_run_as_a_task_is_called_as_one(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    async with hub_of({"t": task_server(marks)}, tmp_path) as hub:
        assert await call(hub, "t__quick") == ("quick, as a task", False)
        assert await call(hub, "t__plain") == ("plain without a task", False)
    assert [(m["tool"], m["task"]) for m in seen(marks, "tools/call")] == \
        [("quick", True), ("plain", False)]


async def test_without_the_servers_task_capability_required_tools_are_held_back(
        tmp_path: Path) -> None:
    """A server that does not declare task-augmented ``tools/call`` gets no task: its
    task-only tools are not offered (each call would fail), with the reason on its
    status; a tool that may run as a task is called plainly."""
    marks = tmp_path / "marks"
    async with hub_of({"t": task_server(marks, "--no-tasks")}, tmp_path) as hub:
        offered = sorted(s.tool for s in hub.specs())
        assert offered == ["plain", "quick"]
        assert await call(hub, "t__quick") == ("quick without a task", False)
        held = hub.statuses()[0].held_back
    assert sorted(held) == [f"{t}: it runs only as a task, and the server does not declare "
                            "task-augmented tools/call" for t in ("doomed", "endless", "research")]
    assert [(m["tool"], m["task"]) for m in seen(marks, "tools/call")] == [("quick", False)]


async def test_server_everythings_research_query_runs_as_a_task(tmp_path: Path) -> None:
    """server-everything's ``simulate-research-query`` (task required) through the hub:
    its stages come as status messages, then the report."""
    from tests.reference import everything

    config = ServerConfig(command=everything(), args=["stdio"], env=tagged_env(),
                          startup_timeout=30)
    async with hub_of({"every": config}, tmp_path) as hub:
        (text, is_error), news = await told(hub, "every__simulate-research-query",
                                            topic="owls")
    assert not is_error and "# Research Report: owls" in text, text
    said = [n.message for n in news if isinstance(n, TaskNews)]
    assert "Gathering sources..." in said and "Generating report..." in said, said
    assert [n.status for n in news if isinstance(n, TaskNews)][-1] == "completed"


async def test_an_ambiguous_research_query_asks_the_person_through_elicitation(
        tmp_path: Path) -> None:
    """``input_required``: the server's question comes on the ``tasks/result`` stream and
    goes to the elicitation handler (the person); the answer shapes the report, and the
    last status told is ``completed`` (the result comes on that stream, often before a
    poll has seen the task end)."""
    from mcp.types import ElicitResult

    from tests.reference import everything

    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"interpretation": "historical"})

    config = ServerConfig(command=everything(), args=["stdio"], env=tagged_env(),
                          startup_timeout=30)
    async with hub_of({"every": config}, tmp_path,
                      client_side=lambda n, c: ClientSide(elicitation=elicit)) as hub:
        (text, is_error), news = await told(hub, "every__simulate-research-query",
                                            topic="owls", ambiguous=True)
    assert not is_error and "owls (historical)" in text, text
    assert asked and "could have multiple interpretations" in asked[0]
    statuses = [n.status for n in news if isinstance(n, TaskNews)]
    assert "input_required" in statuses
    assert statuses[-1] == "completed", statuses  # the card ends as the task did


async def test_an_idle_servers_task_tools_stay_offered(tmp_path: Path) -> None:
    """A server stopped for idleness keeps its tools in the catalog (a call starts it
    again): its task-only tools too, as it said it took tasks when it last ran."""
    marks = tmp_path / "marks"
    async with hub_of({"t": task_server(marks, idle_timeout=0.5)}, tmp_path) as hub:
        for _ in range(200):
            if hub.connections["t"].state == "idle":
                break
            await asyncio.sleep(0.05)
        assert hub.connections["t"].state == "idle"
        assert "t__research" in {s.name for s in hub.specs()}
        assert await call(hub, "t__research", topic="moles", steps=1) == \
            ("researched moles in 1 steps", False)
