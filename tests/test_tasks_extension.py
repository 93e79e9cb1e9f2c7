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
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, tagged_env
from tests.reference import free_port, http_server
from tests.test_hub import call, spec
from tests.test_tasks import seen, told
from tests.zygote import module
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide
from tui_agent.tools.hub import ClientSides, Hub
from tui_agent.tools.news import CALL_NEWS, TaskNews

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAKE = "tests.fakes.ext_task_server"


def ext_server(marks: Path, *args: str, protocol: str = "auto",
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
        yield ServerConfig(url=url, transport="http", startup_timeout=60)


@asynccontextmanager
async def hub_of(servers: Mapping[str, ServerConfig], tmp_path: Path,
                 client_side: ClientSides | None = None) -> AsyncIterator[Hub]:
    async with Hub(servers, log_dir=tmp_path / "logs", default_timeout=30,
                   client_side=client_side) as hub:
        await hub.wait_all()
        for status in hub.statuses():
            assert status.state == "connected", status.last_error
            assert status.protocol == "2026-07-28"
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


async def until(check: Any, what: str, timeout: float = 60.0) -> None:
    """Wait (bounded) until ``check()`` holds."""
    for _ in range(int(timeout / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout:g} s")


async def test_an_input_request_is_asked_once_and_answered_with_tasks_update(
        tmp_path: Path) -> None:
    """``input_required``: the server repeats its pending ``inputRequests`` on every look
    until answered; the elicitation handler (the person) is asked once for its key,
    however many looks showed it, and the answer goes back once by ``tasks/update``
    keyed alike; the task then completes with it."""
    from mcp.types import ElicitResult

    marks = tmp_path / "marks"
    asked: list[str] = []

    def pending_looks() -> int:
        return sum(1 for g in seen(marks, "tasks/get") if g["keys"] == ["name"])

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        await until(lambda: pending_looks() >= 3, "three looks at the pending question")
        return ElicitResult(action="accept", content={"name": "Luca"})

    async with hub_of({"x": ext_server(marks)}, tmp_path,
                      client_side=lambda n, c: ClientSide(elicitation=elicit)) as hub:
        outcome, news = await told(hub, "x__greet")
    assert outcome == ("Hello, Luca!", False)
    assert asked == ["Please enter your name."]
    assert pending_looks() >= 3
    assert [u["keys"] for u in seen(marks, "tasks/update")] == [["name"]]
    assert all(u["declared"] for u in seen(marks, "tasks/update"))
    said = statuses(news)
    assert ("input_required", "waiting for a name") in said and said[-1] == ("completed", None)


async def test_a_declined_question_is_the_tasks_business(tmp_path: Path) -> None:
    """A person who declines answers the question all the same (``action: decline``):
    the task goes on and says what it makes of it."""
    from mcp.types import ElicitResult

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    marks = tmp_path / "marks"
    async with hub_of({"x": ext_server(marks)}, tmp_path,
                      client_side=lambda n, c: ClientSide(elicitation=elicit)) as hub:
        assert await call(hub, "x__greet") == ("greeting decline", False)


async def test_sampling_and_roots_requests_reach_the_clients_own_handlers(
        tmp_path: Path) -> None:
    """A task's sampling request goes to the client's sampling handler (the one a request
    on the open session reaches) and its ``roots/list`` to the roots handler."""
    from mcp.types import CreateMessageResult, ListRootsResult, Root, TextContent

    prompts: list[str] = []

    async def sample(context: Any, params: Any) -> CreateMessageResult:
        prompts.append(params.messages[0].content.text)
        return CreateMessageResult(role="assistant", model="owl-1",
                                   content=TextContent(type="text", text="Silent wings"))

    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///work/owls")])  # type: ignore[arg-type]

    marks = tmp_path / "marks"
    side = ClientSide(sampling=sample, list_roots=roots)
    async with hub_of({"x": ext_server(marks)}, tmp_path, client_side=lambda n, c: side) as hub:
        assert await call(hub, "x__haiku") == ("owl-1 wrote: Silent wings", False)
        assert await call(hub, "x__roots") == ("file:///work/owls", False)
    assert prompts == ["A haiku about owls."]
    assert [u["keys"] for u in seen(marks, "tasks/update")] == [["poem"], ["roots"]]


async def test_a_refused_question_cancels_the_task_and_says_why(tmp_path: Path) -> None:
    """No sampling handler (the person turned sampling off): the task's request for the
    model cannot be answered, so the call fails naming the server, the tool and what was
    asked, and the task is cancelled on the server."""
    marks = tmp_path / "marks"
    async with hub_of({"x": ext_server(marks)}, tmp_path) as hub:
        text, is_error = await call(hub, "x__haiku")
    assert is_error, text
    assert "server 'x'" in text and "haiku" in text and "sampling/createMessage" in text, text
    assert len(seen(marks, "tasks/cancel")) == 1


async def test_a_stopped_call_cancels_its_task_on_the_server(tmp_path: Path) -> None:
    """Cancelling the call (what Esc, Ctrl-C, a turn's stop and a script's end do) sends
    ``tasks/cancel`` for its task before the call lets go."""
    marks = tmp_path / "marks"
    async with hub_of({"x": ext_server(marks)}, tmp_path) as hub:
        news: list[Any] = []
        token = CALL_NEWS.set(news.append)
        running = asyncio.create_task(hub.call(spec(hub, "x__endless"), {}))
        CALL_NEWS.reset(token)
        await until(lambda: len(seen(marks, "tasks/get")) >= 2, "two looks at the task")
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        cancels = seen(marks, "tasks/cancel")
        assert [c["task"] for c in cancels] == [seen(marks, "tasks/get")[0]["task"]]
        assert cancels[0]["declared"]


async def test_a_task_past_its_time_limit_is_cancelled_and_said_so(tmp_path: Path) -> None:
    marks = tmp_path / "marks"  # the limit leaves a loaded machine time to make the task
    async with hub_of({"x": ext_server(marks, max_call_time=5)}, tmp_path) as hub:
        text, is_error = await call(hub, "x__endless")
    assert is_error and "did not answer within 5 s" in text, text
    assert len(seen(marks, "tasks/cancel")) == 1


async def test_a_poll_interval_longer_than_the_call_timeout_is_waited_out(
        tmp_path: Path) -> None:
    """The server asks to be looked at every 3 s; its per-call ``timeout`` is 1 s: the
    call's timer counts from each look, so the task is followed to its end, not cut off
    before the first ``tasks/get``."""
    marks = tmp_path / "marks"
    config = ext_server(marks, "--poll-ms", "3000", "--step", "0.1", timeout=1)
    async with hub_of({"x": config}, tmp_path) as hub:
        text, is_error = await call(hub, "x__research", topic="owls", steps=1)
    assert not is_error, text
    assert "owls" in text
    assert seen(marks, "tasks/get") and not seen(marks, "tasks/cancel")


async def test_a_failed_task_is_an_error_with_its_json_rpc_error(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    async with hub_of({"x": ext_server(marks)}, tmp_path) as hub:
        (text, is_error), news = await told(hub, "x__doomed")
    assert is_error, text
    assert "doomed" in text and "failed: API rate limit exceeded (MCP error -32603)" in text
    assert statuses(news)[-1] == ("failed", "Tool execution failed: API rate limit exceeded")
    assert not seen(marks, "tasks/cancel")  # an ended task is not cancelled


async def test_a_task_the_server_forgot_is_said_so(tmp_path: Path) -> None:
    """``tasks/get`` answers -32602 (expired, purged, a restart): the call fails naming
    the server, the tool and the task, with the server's words."""
    marks = tmp_path / "marks"
    async with hub_of({"x": ext_server(marks)}, tmp_path) as hub:
        text, is_error = await call(hub, "x__vanishing")
    assert is_error, text
    assert text.startswith("error: server 'x' no longer knows the task of vanishing (task "), text
    assert "Task has expired" in text


async def test_a_direct_answer_to_an_opted_in_call_is_the_result(tmp_path: Path) -> None:
    """The server decides: a call that declared the extension and got a plain result
    is done, with no task news and no task request."""
    marks = tmp_path / "marks"
    async with hub_of({"x": ext_server(marks)}, tmp_path) as hub:
        outcome, news = await told(hub, "x__direct", topic="owls")
    assert outcome == ("direct answer about owls", False)
    assert not statuses(news)
    assert [(m["tool"], m["declared"]) for m in seen(marks, "tools/call")] == \
        [("direct", True)]
    assert {m["method"] for m in seen(marks)} == {"tools/call"}


async def test_a_task_born_completed_is_looked_at_once_for_its_result(
        tmp_path: Path) -> None:
    """A ``CreateTaskResult`` carries no result, even for a task already completed: one
    ``tasks/get`` fetches it."""
    marks = tmp_path / "marks"
    async with hub_of({"x": ext_server(marks)}, tmp_path) as hub:
        outcome, news = await told(hub, "x__instant")
    assert outcome == ("done at once", False)
    assert statuses(news) == [("completed", None)]
    assert [g["status"] for g in seen(marks, "tasks/get")] == ["completed"]


async def test_missing_capability_is_explained_with_what_to_do(tmp_path: Path) -> None:
    """On a 2025-11-25 session the extension is not declared (tasks are the core's
    there), and a server that can run the tool only as an extension task answers -32021:
    the error names the server, the tool, the extension and the setting that fixes it."""
    marks = tmp_path / "marks"
    config = ext_server(marks, protocol="legacy")
    async with Hub({"x": config}, log_dir=tmp_path / "logs", default_timeout=30) as hub:
        await hub.wait_all()
        text, is_error = await call(hub, "x__research", topic="owls")
    assert is_error
    assert text == ("error: server 'x' runs research only as a task of the MCP tasks extension "
                    "(io.modelcontextprotocol/tasks), which tui-agent declares only in "
                    "protocol 2026-07-28, and this connection speaks 2025-11-25: set "
                    "protocol = \"2026-07-28\" (or \"auto\") for the server "
                    "(MCP error -32021)"), text
    assert [m["declared"] for m in seen(marks, "tools/call")] == [False]


async def test_task_notifications_end_the_wait_for_the_next_look(tmp_path: Path) -> None:
    """A server that streams ``notifications/tasks``: the task's id is listened for
    (``subscriptions/listen`` with ``taskIds``), and each notification is taken as a
    look, so a task whose server asks for a look every 20 s ends in a few seconds with
    every status told."""
    marks = tmp_path / "marks"
    config = ext_server(marks, "--notify", "--poll-ms", "20000")
    async with hub_of({"x": config}, tmp_path) as hub:
        outcome, news = await asyncio.wait_for(told(hub, "x__research", topic="owls"), 15)
    assert outcome == ("researched owls in 3 steps", False)
    assert statuses(news) == [("working", "starting")] + \
        [("working", f"step {n} of 3") for n in (1, 2, 3)] + [("completed", None)]
    task = {n.task_id for n in news if isinstance(n, TaskNews)}
    listens = [li for li in seen(marks, "subscriptions/listen")
               if li["tasks"]]  # not the hub's own listen, for list changes
    assert [li["tasks"] for li in listens] == [list(task)] and listens[0]["declared"]
    assert len(seen(marks, "notifications/tasks")) >= 4
    assert not seen(marks, "tasks/get")


async def test_a_task_only_tool_is_offered_where_the_extension_is(tmp_path: Path) -> None:
    """A tool that says it runs only as a task (``execution.taskSupport: required``) is
    offered by a 2026-07-28 server that offers the extension, and held back, with the
    reason, by one that does not."""
    with_ext, without = tmp_path / "with", tmp_path / "without"
    servers = {"x": ext_server(with_ext, "--execution"),
               "y": ext_server(without, "--execution", "--no-extension")}
    async with hub_of(servers, tmp_path) as hub:
        offered = {s.name for s in hub.specs()}
        held = {s.name: s.held_back for s in hub.statuses()}
        assert await call(hub, "x__research", steps=1) == ("researched nothing in 1 steps",
                                                           False)
    assert "x__research" in offered and "y__research" not in offered
    assert held == {"x": (), "y": (
        "research: it runs only as a task, and the server does not offer the tasks "
        "extension (io.modelcontextprotocol/tasks) in protocol 2026-07-28",)}
