"""The tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``, MCP 2026-07-28)
through the real hub, against a real server written from the extension's specification
on the SDK's own server (tests/fakes/ext_task_server.py) over stdio and streamable HTTP:
the per-request opt-in, a task followed to its result by ``tasks/get`` alone, questions
(``inputRequests``) answered once each through the client's own handlers and sent with
``tasks/update``, ``tasks/cancel`` when a call stops, a failed task, a forgotten task, a
direct answer, ``-32021`` explained and ``notifications/tasks``. What the server saw is
read from its marks file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, tagged_env
from tests.reference import free_port, http_server
from tests.test_hub import call, spec
from tests.test_tasks import told
from tests.zygote import module
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide
from tui_agent.tools.hub import ClientSides, Hub
from tui_agent.tools.news import CALL_NEWS, TaskNews

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAKE = "tests.fakes.ext_task_server"


def ext_server(marks: Path, *args: str, protocol: str = "2026-07-28",
               **config: Any) -> ServerConfig:
    """tests/fakes/ext_task_server.py over stdio."""
    command, *argv = module(FAKE, "--marks", str(marks), *args)
    return ServerConfig(command=command, args=argv, cwd=str(ROOT), env=tagged_env(),
                        startup_timeout=60, protocol=protocol,  # type: ignore[arg-type]
                        **config)


@contextmanager
def served(transport: str, marks: Path, *args: str) -> Iterator[ServerConfig]:
    """The server over ``transport`` (stdio or streamable HTTP)."""
    if transport == "stdio":
        yield ext_server(marks, *args)
        return
    port = free_port()
    command = module(FAKE, "--transport", "http", "--port", str(port), "--marks", str(marks),
                     *args)
    with http_server(command, port, {"PYTHONPATH": str(ROOT)}, "/mcp") as url:
        yield ServerConfig(url=url, transport="http", startup_timeout=60,
                           protocol="2026-07-28")


def seen(marks: Path, method: str | None = None) -> list[dict[str, Any]]:
    """What the server was asked (and sent), in order (``method``: only those)."""
    if not marks.exists():
        return []
    lines = [json.loads(line) for line in marks.read_text().splitlines()]
    return [m for m in lines if method is None or m["method"] == method]


@asynccontextmanager
async def hub_of(servers: Mapping[str, ServerConfig], tmp_path: Path,
                 client_side: ClientSides | None = None) -> AsyncIterator[Hub]:
    async with Hub(servers, log_dir=tmp_path / "logs", default_timeout=30,
                   client_side=client_side) as hub:
        await hub.wait_all()
        for status in hub.statuses():
            assert status.state == "connected", status.last_error
        yield hub


def statuses(news: list[Any]) -> list[tuple[str, str | None]]:
    return [(n.status, n.message) for n in news if isinstance(n, TaskNews)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_task_is_followed_by_tasks_get_to_its_result(tmp_path: Path,
                                                             transport: str) -> None:
    """The call declares the extension in its ``_meta``; the server answers with a task;
    ``tasks/get`` (declaring it too) is asked until the task completes, its result comes
    in the task (there is no ``tasks/result``), and each status message reaches the
    caller once, in order."""
    marks = tmp_path / "marks"
    with served(transport, marks, "--step", "0.2") as config:
        async with hub_of({"x": config}, tmp_path) as hub:
            outcome, news = await told(hub, "x__research", topic="owls", steps=3)
    assert outcome == ("researched owls in 3 steps", False)
    assert statuses(news) == [("working", "starting")] + \
        [("working", f"step {n} of 3") for n in (1, 2, 3)] + [("completed", None)]
    assert [(m["tool"], m["declared"]) for m in seen(marks, "tools/call")] == \
        [("research", True)]
    gets = seen(marks, "tasks/get")
    assert len(gets) >= 4 and all(g["declared"] for g in gets), gets
    if transport == "http":  # the extension's routing header: the task's id
        assert {g["name"] for g in gets} == {g["task"] for g in gets}
    assert len({n.task_id for n in news if isinstance(n, TaskNews)}) == 1
    assert not seen(marks, "tasks/cancel")
