"""ACP sessions of ``tui-agent acp``: ``session/cancel`` stops a turn (in the model's
stream, or in a server's call, which the server sees cancelled) and the prompt answers
``cancelled``; ``session/load`` replays a saved conversation and continues it; MCP
servers the editor hands over in ``session/new`` (stdio, streamable HTTP and SSE) serve
the session's turns under the editor's names."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path

import pytest
from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio, SseMcpServer

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.conftest import ROOT, TAG_VAR, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import free_port, http_server

pytestmark = pytest.mark.slow


def wait_file(path: Path, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.exists()


@pytest.mark.parametrize("where", ["stream", "tool"])
def test_cancel_stops_the_turn_and_the_servers_call(fake_llm: FakeLLM, tmp_path: Path,
                                                    where: str) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    if where == "stream":
        fake_llm.push(Reply(text="never finished", hang=True))
    else:
        fake_llm.push(Reply(tool_calls=[FakeToolCall("fake__hang", {}, id="h1")]))
    editor = Editor()
    conf = config(tmp_path, fake_llm, fake_server_toml(
        "fake", "--marks", str(marks), more='auto = ["hang"]\n'))

    async def scenario() -> str:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            turn = asyncio.ensure_future(prompt(conn, sid, "go"))
            if where == "stream":
                await editor.until(lambda: fake_llm.requests != [])
                await asyncio.sleep(0.3)
            else:
                await editor.until(lambda: any(u.status == "in_progress"
                                               for u in editor.of("tool_call_update")))
            await conn.cancel(session_id=sid)
            return await turn

    assert asyncio.run(scenario()) == "cancelled"
    if where == "tool":
        assert wait_file(marks / "cancelled"), "the server's call was not cancelled"


def test_load_replays_a_saved_session_and_continues_it(fake_llm: FakeLLM,
                                                       tmp_path: Path) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("fake__echo", {"text": "ping"}, id="e1")]),
                  Reply(text="It said ping."), Reply(text="Second answer."))
    conf = config(tmp_path, fake_llm, fake_server_toml("fake", more='auto = ["echo"]\n'))
    first, second = Editor(), Editor()

    async def scenario() -> str:
        async with running(first, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(conn, sid, "echo ping please")
        async with running(second, conf, cwd=tmp_path) as (conn, _):
            loaded = await conn.load_session(cwd=str(tmp_path), session_id=sid,
                                             mcp_servers=[])
            assert loaded is not None and loaded.modes is not None
            replayed = list(second.kinds())
            assert await prompt(conn, sid, "and then?") == "end_turn"
            # what follows the response (its commands, its title) may have come already
            return ",".join(k for k in replayed if k not in ("available_commands_update",
                                                             "session_info_update"))

    replayed = asyncio.run(scenario())
    assert replayed == ("user_message_chunk,tool_call,tool_call_update,"
                        "agent_message_chunk")
    assert second.of("user_message_chunk")[0].content.text == "echo ping please"
    assert second.of("tool_call")[0].title == "fake: echo"
    assert "It said ping." in second.text()
    history = json.dumps(fake_llm.requests[-1]["messages"])
    assert "echo ping please" in history and "It said ping." in history


def test_load_replays_how_each_call_ended_and_a_scripts_own_calls(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A failed code-mode script whose second call was denied (``tui-agent run``'s session
    file): the script and the denied call replay ``failed``, the script's calls follow
    its card as tool calls of their own, titled as live. The same file without the record
    (an older tui-agent's) replays every call ``completed``, as before."""
    from tests.test_session_calls import failed_script_session
    from tui_agent.config import paths

    saved = failed_script_session(fake_llm, tmp_path)
    capsys.readouterr()
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    sid = lines[0]["id"]
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    (store / f"{sid}.jsonl").write_text(saved.read_text())
    old = f"{sid}-old"
    older = [{**line, "id": old} if line.get("kind") == "meta" else
             {k: v for k, v in line.items() if k != "call"} for line in lines]
    (store / f"{old}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in older))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            for ref in (sid, old):
                await conn.load_session(cwd=str(tmp_path), session_id=ref, mcp_servers=[])

    asyncio.run(scenario())

    def calls(ref: str) -> list[tuple[str, str, str | None, str | None]]:
        return [(u.session_update, u.tool_call_id, u.status, getattr(u, "title", None))
                for s, u in editor.updates if s == ref
                and u.session_update in ("tool_call", "tool_call_update")]

    assert calls(sid) == [
        ("tool_call", "s1", "failed", "code-mode script"),
        ("tool_call", "s1.1", "completed", "calc: add (called by the script s1)"),
        ("tool_call", "s1.2", "failed", "calc: echo (called by the script s1)"),
        ("tool_call_update", "s1", "failed", None)]
    nested = {u.tool_call_id: u for s, u in editor.updates
              if s == sid and u.session_update == "tool_call"}
    assert nested["s1.1"].content[0].content.text == "5"
    assert nested["s1.2"].raw_input == {"text": "denied"}
    assert calls(old) == [("tool_call", "s1", "completed", "code-mode script"),
                          ("tool_call_update", "s1", "completed", None)]


def test_a_session_nobody_used_is_not_kept_and_one_reloaded_keeps_its_header(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """An editor opens sessions freely: one left unused leaves no file. One loaded again
    while still open and blank (the same id) keeps its ``meta`` record, and what is said
    then is kept after it."""
    from tui_agent.config import paths
    from tui_agent.core.session import load

    fake_llm.push(Reply(text="Hello again."))

    async def scenario() -> tuple[str, str]:
        async with running(Editor(), config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            unused = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
            assert await prompt(conn, sid, "hello") == "end_turn"
        return unused, sid

    unused, sid = asyncio.run(scenario())
    store = paths.sessions_dir()
    assert not list(store.glob(f"{unused}*")), "an unused session left a file"
    conv = load(store / f"{sid}.jsonl")
    assert conv.meta.get("id") == sid and conv.meta.get("model") == "openai/fake-model"
    assert [m["content"] for m in conv.messages] == ["hello", "Hello again."]


def test_load_of_an_unknown_session_is_an_error_naming_it(fake_llm: FakeLLM,
                                                          tmp_path: Path) -> None:
    from acp import RequestError

    async def scenario() -> None:
        async with running(Editor(), config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            with pytest.raises(RequestError) as caught:
                await conn.load_session(cwd=str(tmp_path), session_id="nope-123",
                                        mcp_servers=[])
            assert "nope-123" in json.dumps(caught.value.data)

    asyncio.run(scenario())


def test_servers_the_editor_hands_over_serve_the_session(fake_llm: FakeLLM,
                                                         tmp_path: Path) -> None:
    """Over each transport the editor may hand one over: stdio, streamable HTTP, SSE."""
    ports = free_port(), free_port()
    fake_llm.push(Reply(tool_calls=[
        FakeToolCall("handed__echo", {"text": "over stdio"}, id="a1"),
        FakeToolCall("web__echo", {"text": "over http"}, id="a2"),
        FakeToolCall("events__echo", {"text": "over sse"}, id="a3")]), Reply(text="all"))
    editor = Editor(["allow_once"] * 3)
    stdio = McpServerStdio(name="handed", command=sys.executable,
                           args=["-m", "tests.fakes.mcp_server", "--name", "handed"],
                           env=[EnvVariable(name="PYTHONPATH", value=str(ROOT)),
                                EnvVariable(name=TAG_VAR, value=tagged_env()[TAG_VAR])])

    def command(transport: str, port: int) -> list[str]:
        return [sys.executable, "-m", "tests.fakes.mcp_server", "--transport", transport,
                "--port", str(port)]

    async def scenario(http_url: str, sse_url: str) -> str:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            web = HttpMcpServer(type="http", name="web", url=http_url, headers=[])
            events = SseMcpServer(type="sse", name="events", url=sse_url, headers=[])
            sid = (await conn.new_session(cwd=str(tmp_path),
                                          mcp_servers=[stdio, web, events])).session_id
            return await prompt(conn, sid, "use them all")

    env = {"PYTHONPATH": str(ROOT)}
    with http_server(command("http", ports[0]), ports[0], env=env, path="/mcp") as http_url, \
            http_server(command("sse", ports[1]), ports[1], env=env, path="/sse") as sse_url:
        assert asyncio.run(scenario(http_url, sse_url)) == "end_turn"
    offered = {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    assert {"handed__echo", "web__echo", "events__echo"} <= offered
    done = {u.tool_call_id: u.content[0].content.text
            for u in editor.of("tool_call_update") if u.status == "completed"}
    assert done == {"a1": "over stdio", "a2": "over http", "a3": "over sse"}


def test_a_handed_server_named_as_a_configured_one_never_touches_the_users(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """The editor's ``foo`` beside the config's ``foo`` is ``editor-foo``: "allow always" on
    it leaves the user's config file as it was, and the user's ``foo`` still asks."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("editor-foo__echo", {"text": "e"}, id="h1")]),
                  Reply(text="one"),
                  Reply(tool_calls=[FakeToolCall("foo__echo", {"text": "u"}, id="u1")]),
                  Reply(text="two"))
    conf = config(tmp_path, fake_llm, fake_server_toml("foo"))
    before = conf.read_bytes()
    editor = Editor(["allow_always", "allow_once"])
    handed = McpServerStdio(name="foo", command=sys.executable,
                            args=["-m", "tests.fakes.mcp_server", "--name", "handed"],
                            env=[EnvVariable(name="PYTHONPATH", value=str(ROOT)),
                                 EnvVariable(name=TAG_VAR, value=tagged_env()[TAG_VAR])])

    async def scenario() -> list[str]:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[handed])).session_id
            return [await prompt(conn, sid, "editor's"), await prompt(conn, sid, "user's")]

    assert asyncio.run(scenario()) == ["end_turn", "end_turn"]
    offered = {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    assert {"foo__echo", "editor-foo__echo"} <= offered
    assert [q.tool_call_id for q, _ in editor.asked] == ["h1", "u1"]
    assert conf.read_bytes() == before


def test_load_takes_only_an_exact_session_id(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A prefix of a saved session's id, or the path of its file, is refused naming it."""
    from acp import RequestError

    fake_llm.push(Reply(text="saved"))
    conf = config(tmp_path, fake_llm)

    async def scenario() -> None:
        async with running(Editor(), conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(conn, sid, "keep me")
        [path] = list((tmp_path / "home" / "data").rglob(f"{sid}.jsonl"))
        async with running(Editor(), conf, cwd=tmp_path) as (conn, _):
            for ref in (sid[:-2], str(path)):
                with pytest.raises(RequestError) as caught:
                    await conn.load_session(cwd=str(tmp_path), session_id=ref, mcp_servers=[])
                assert ref in json.dumps(caught.value.data)
            assert await conn.load_session(cwd=str(tmp_path), session_id=sid,
                                           mcp_servers=[]) is not None

    asyncio.run(scenario())


def test_text_held_back_is_sent_when_the_turn_is_cancelled(fake_llm: FakeLLM,
                                                           tmp_path: Path) -> None:
    """The masker holds back a tail that could start a secret until the next piece; a turn
    cancelled before that piece still sends it."""
    fake_llm.push(Reply(text="The answer is sk-te" + "st, and more", chunk_chars=19,
                        delay=2.0))
    editor = Editor()

    async def scenario() -> str:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            turn = asyncio.ensure_future(prompt(conn, sid, "go"))
            await editor.until(lambda: "The answer is" in editor.text())
            await conn.cancel(session_id=sid)
            return await turn

    assert asyncio.run(scenario()) == "cancelled"
    assert editor.text() == "The answer is sk-te"


def test_closing_waits_a_bounded_time_for_a_turn_that_swallows_its_cancel() -> None:
    """A turn that swallows every cancellation is given up on after the wait (logged) and
    the session closes; one that ends at the first is waited for."""
    from tui_agent.acp.sessions import stop

    async def scenario() -> tuple[bool, bool, bool]:
        release = asyncio.Event()

        async def stubborn() -> None:
            while not release.is_set():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(3600)

        hung = asyncio.ensure_future(stubborn())
        polite = asyncio.ensure_future(asyncio.sleep(3600))
        await asyncio.sleep(0)
        try:
            gave_up = await asyncio.wait_for(stop(hung, wait=0.5), 15)
            still = not hung.done()
            ended = await asyncio.wait_for(stop(polite, wait=0.5), 15)
        finally:
            release.set()  # let it go, so that this test's own loop can end
            hung.cancel()
            await asyncio.wait({hung}, timeout=15)
        return gave_up, still, ended

    assert asyncio.run(scenario()) == (False, True, True)
