"""Opening a session in ``tui-agent acp``, where it can go wrong between the request and
the session's first turn: a ``session/load`` cancelled (``$/cancel_request``) during its
replay leaves no session open (its file unlocked: another process opens it), and one
cancelled while it closes the session's open copy leaves that copy closed in full; the
updates of a new session follow the ``session/new`` response that names it; a model
switched while the previous model's reasoning levels are looked up never gets those
levels."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from tests.acp_kit import Editor, config, prompt, running
from tests.fakes.llm_server import FakeLLM, Reply
from tests.hook_kit import hooks_toml, script
from tests.test_acp_errors import next_line, send, start
from tui_agent.config import paths
from tui_agent.core.session import SessionWriter
from tui_agent.core.session.store import SessionStore

pytestmark = pytest.mark.slow


def saved_session(cwd: Path, exchanges: int) -> str:
    """A saved conversation of ``exchanges`` questions and answers; its id."""
    store = SessionStore(paths.sessions_dir())
    store.directory.mkdir(parents=True, exist_ok=True)
    writer = SessionWriter.create(store.new_path(), {"cwd": str(cwd)})
    for i in range(exchanges):
        writer.message({"role": "user", "content": f"question {i}"})
        writer.message({"role": "assistant", "content": f"answer {i}"})
    writer.close()
    return writer.id


def test_a_load_cancelled_during_its_replay_leaves_no_session_open(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    conf = config(tmp_path, fake_llm)
    sid = saved_session(tmp_path, 4000)  # a replay of 8000 updates: cancelled midway
    editor = Editor()

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            # SDK 0.12.1's client cannot cancel a request: its next id is read, the
            # request and the notification sent raw
            rid = conn._conn._next_request_id
            load = asyncio.ensure_future(conn._conn.send_request(
                "session/load", {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}))
            await editor.until(lambda: len(editor.updates) > 10, timeout=120)
            await conn._conn.send_notification("$/cancel_request", {"requestId": rid})
            with pytest.raises(RequestError) as cancelled:
                await asyncio.wait_for(load, 120)
            seen["cancelled"] = cancelled.value
            seen["replayed"] = len(editor.updates)
            with pytest.raises(RequestError) as not_open:
                await conn.close_session(session_id=sid)
            seen["not_open"] = not_open.value
            # its lock is free: another tui-agent acp opens it
            async with running(Editor(), conf, cwd=tmp_path,
                               log=tmp_path / "other.log") as (other, _):
                seen["resumed"] = await asyncio.wait_for(other.resume_session(
                    cwd=str(tmp_path), session_id=sid, mcp_servers=[]), 120)
                await other.close_session(session_id=sid)
        return seen

    seen = asyncio.run(scenario())
    assert seen["cancelled"].code == -32800
    assert seen["replayed"] < 8000  # cancelled before the replay ended
    assert seen["not_open"].code == -32602 and "no such session" in str(seen["not_open"].data)
    assert seen["resumed"].modes is not None


def test_a_load_cancelled_while_the_open_copy_closes_leaves_it_closed_in_full(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``session/load`` of a session open in this process closes that copy first; the
    request cancelled then (a SessionEnd hook makes the close slow) still closes it in
    full, so the next ``session/load`` opens the file instead of finding it locked."""
    fake_llm.push(Reply(text="Noted."))
    ending = script(tmp_path, "ending.sh", "#!/bin/bash\ncat > /dev/null\nsleep 4\n")
    conf = config(tmp_path, fake_llm,
                  extra="\n" + hooks_toml("SessionEnd", str(ending), timeout=60))
    editor = Editor()

    async def scenario() -> tuple[RequestError, Any]:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(conn, sid, "remember this")
            rid = conn._conn._next_request_id
            load = asyncio.ensure_future(conn._conn.send_request(
                "session/load", {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}))
            await asyncio.sleep(1.5)  # the open copy's SessionEnd hook is running
            await conn._conn.send_notification("$/cancel_request", {"requestId": rid})
            with pytest.raises(RequestError) as cancelled:
                await asyncio.wait_for(load, 120)
            again = await asyncio.wait_for(conn.load_session(
                cwd=str(tmp_path), session_id=sid, mcp_servers=[]), 120)
            return cancelled.value, again

    cancelled, again = asyncio.run(scenario())
    assert cancelled.code == -32800
    assert again.modes is not None
    said = [u.content.text for u in editor.of("user_message_chunk")]
    assert said[-1:] == ["remember this"]  # the second load replayed the conversation


def test_the_updates_of_a_new_session_follow_its_response(fake_llm: FakeLLM,
                                                        tmp_path: Path) -> None:
    """Raw stdio, as the editor reads it: a client drops updates of a session it does not
    know yet, so none may come before the ``session/new`` response that names it."""
    conf = config(tmp_path, fake_llm)
    proc = start(conf, tmp_path)
    assert proc.stdout is not None
    try:
        send(proc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"protocolVersion": 1}}))
        send(proc, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                               "params": {"cwd": str(tmp_path), "mcpServers": []}}))
        read: list[dict[str, Any]] = []
        while not any(m.get("id") == 2 for m in read):
            line = next_line(proc.stdout)
            assert line, f"the agent closed stdout; it wrote {read}"
            read.append(json.loads(line))
        sid = read[-1]["result"]["sessionId"]
        before = [m for m in read if m.get("method") == "session/update"]
        after: list[dict[str, Any]] = []
        while not after:  # the commands it offers, at least
            after = [m for m in [json.loads(next_line(proc.stdout))]
                     if m.get("method") == "session/update"]
    finally:
        proc.kill()
        proc.wait(30)
    assert before == []
    assert after[0]["params"]["sessionId"] == sid


@contextmanager
def slow_ollama() -> Iterator[tuple[str, threading.Event, threading.Event]]:
    """An Ollama server whose ``/api/show`` (what tui-agent asks of a model it serves,
    its reasoning among it) answers once released, or after 2 s (tui-agent waits 3 s):
    its address, the event set when it is asked, and the release."""
    asked, release = threading.Event(), threading.Event()

    class Show(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            asked.set()
            release.wait(2)
            body = json.dumps({"capabilities": ["completion", "tools"],
                               "model_info": {"llama.context_length": 8192}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Show)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked, release
    finally:
        release.set()
        server.shutdown()
        thread.join(30)


def test_a_quick_model_switch_never_offers_the_previous_models_levels(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """The session's model (an Ollama one that does not think: ``default`` alone) is
    switched to one that reasons while its levels are asked of its server: the answer,
    late, is not offered for the new model; the levels follow each model in turn."""
    editor = Editor()

    def told() -> list[tuple[str, list[str]]]:
        shown = []
        for update in editor.of("config_option_update"):
            found = {o.id: o for o in update.config_options}
            shown.append((found["model"].current_value,
                          [v.value for v in found["reasoning_effort"].options]))
        return shown

    async def scenario(asked: threading.Event, release: threading.Event) -> Any:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            assert await asyncio.to_thread(asked.wait, 120), "the server was never asked"
            switched = await conn.set_config_option(config_id="model", session_id=sid,
                                                    value="openai/o3-mini")
            release.set()
            await conn.set_config_option(config_id="model", session_id=sid,
                                         value="openai/gpt-4o-mini")
            # the levels are learned one model at a time, in order: once gpt-4o-mini's
            # are told, the earlier lookups are over
            await editor.until(lambda: ("openai/gpt-4o-mini", ["default"]) in told(),
                               timeout=120)
            return switched

    with slow_ollama() as (base, asked, release):
        conf = config(tmp_path, fake_llm,
                      extra='choices = ["openai/o3-mini", "openai/gpt-4o-mini"]\n')
        conf.write_text(conf.read_text().replace("openai/fake-model", "ollama/plain")
                        .replace(fake_llm.base_url, base))
        switched = asyncio.run(scenario(asked, release))
    levels = {o.id: [v.value for v in o.options] for o in switched.config_options}
    assert levels["reasoning_effort"] == ["default", "none", "minimal", "low", "medium",
                                          "high"]
    assert told() == [("openai/gpt-4o-mini", ["default"])]
