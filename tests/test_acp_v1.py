"""The ACP v1 additions of ``tui-agent acp`` through the Python SDK's client side:
``session/list`` (newest first, by ``cwd``, in pages), ``session/resume`` (no replay, the
conversation continued), ``session/delete`` (gone from every list, the file kept aside;
an unknown id is no error; a session another process holds is refused), the config
options (model, permission mode, reasoning, code mode) and ``config_option_update``,
``usage_update``, ``session_info_update``, message ids, tui-agent's own messages marked
in ``_meta``, and ``auth_required`` for a model without its key. (The TypeScript SDK's
client drives the same methods in tests/test_acp_ts_client.py.)"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.client.connection import ClientSideConnection

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.zygote import REAL
from tui_agent.acp import history
from tui_agent.config import paths
from tui_agent.core.session import SessionWriter
from tui_agent.core.session.store import SessionStore

pytestmark = pytest.mark.slow


async def delete(conn: ClientSideConnection, session_id: str) -> Any:
    """``session/delete``: SDK 0.12.1's client has the types but no method for it."""
    return await conn._conn.send_request("session/delete", {"sessionId": session_id})


def test_list_resume_and_delete(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="First answer."), Reply(text="Second answer."),
                  Reply(text="Third answer."))
    conf = config(tmp_path, fake_llm)
    (a := tmp_path / "a").mkdir()
    (b := tmp_path / "b").mkdir()
    editor = Editor()

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            s1 = (await conn.new_session(cwd=str(a), mcp_servers=[])).session_id
            await prompt(conn, s1, "alpha question")
            s2 = (await conn.new_session(cwd=str(b), mcp_servers=[])).session_id
            await prompt(conn, s2, "beta question")
            seen["all"] = (await conn.list_sessions()).sessions
            seen["a"] = (await conn.list_sessions(cwd=str(a))).sessions
            with pytest.raises(RequestError) as bad:
                await conn.list_sessions(cursor="not-ours")
            seen["bad"] = bad.value
            await conn.close_session(session_id=s1)
            before = len(editor.updates)
            resumed = await conn.resume_session(cwd=str(a), session_id=s1, mcp_servers=[])
            seen["modes"] = resumed.modes
            await prompt(conn, s1, "and more")
            seen["after_resume"] = editor.updates[before:]
            seen["deleted"] = await delete(conn, s2)
            seen["again"] = await delete(conn, s2)
            seen["never"] = await delete(conn, "20990101-000000-abcdef")
            seen["left"] = (await conn.list_sessions()).sessions
            seen["ids"] = s1, s2
        return seen

    seen = asyncio.run(scenario())
    s1, s2 = seen["ids"]
    assert [(s.session_id, s.title, s.cwd) for s in seen["all"]][:2] == [
        (s2, "beta question", str(b)), (s1, "alpha question", str(a))]
    assert [s.session_id for s in seen["a"]] == [s1]
    assert seen["bad"].code == -32602 and "cursor" in str(seen["bad"].data)
    # resumed: nothing replayed, and the model gets the conversation so far
    assert seen["modes"] is not None
    assert not [u for sid, u in seen["after_resume"]
                if sid == s1 and u.session_update == "user_message_chunk"]
    assert "alpha question" in str(fake_llm.requests[-1]["messages"])
    # deleted: off the list, its file kept aside; again, or an unknown id: no error
    assert seen["deleted"] == {} and seen["again"] == {} and seen["never"] == {}
    assert s2 not in [s.session_id for s in seen["left"]]
    assert (paths.sessions_dir() / "deleted" / f"{s2}.jsonl").exists()
    assert not (paths.sessions_dir() / f"{s2}.jsonl").exists()


def test_delete_refuses_a_session_another_process_holds(fake_llm: FakeLLM,
                                                       tmp_path: Path) -> None:
    fake_llm.push(Reply(text="Held."))
    conf = config(tmp_path, fake_llm)

    async def scenario() -> tuple[RequestError, Any]:
        async with running(Editor(), conf, cwd=tmp_path) as (holder, _):
            sid = (await holder.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(holder, sid, "keep this open")
            async with running(Editor(), conf, cwd=tmp_path,
                               log=tmp_path / "other.log") as (other, _):
                with pytest.raises(RequestError) as refused:
                    await delete(other, sid)
                await holder.close_session(session_id=sid)
                return refused.value, await delete(other, sid)

    refused, deleted = asyncio.run(scenario())
    assert refused.code == -32602 and "another tui-agent process" in str(refused.data)
    assert deleted == {}


def test_pages_of_the_list_newest_first(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    store.directory.mkdir()
    made = []
    for i in range(5):
        writer = SessionWriter.create(store.new_path(), {"cwd": str(tmp_path / f"p{i % 2}")})
        writer.message({"role": "user", "content": f"question {i}"})
        writer.close()
        os.utime(writer.path, (1_000_000 + i, 1_000_000 + i))
        made.append(writer.id)
    pages, cursor = [], None
    while True:
        found, cursor = history.page(store, frozenset(), None, cursor, size=2)
        pages.append([s.title for s in found])
        if cursor is None:
            break
    assert pages == [["question 4", "question 3"], ["question 2", "question 1"],
                     ["question 0"]]
    found, cursor = history.page(store, frozenset(), str(tmp_path / "p1"), None, size=2)
    assert [s.session_id for s in found] == [made[3], made[1]] and cursor is None
    assert found[0].updated_at == "1970-01-12T13:46:43Z"


def test_options_updates_and_message_ids(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="Let me echo.", tool_calls=[FakeToolCall("fake__echo",
                                                                      {"text": "hi"})]),
                  Reply(text="It said hi."), Reply(text="Again."),
                  *[Reply(status=500, error_message="the provider broke")] * 2)  # one retry
    conf = config(tmp_path, fake_llm, fake_server_toml("fake", more='auto = ["echo"]\n'),
                  extra='context_window = 64000\nchoices = ["openai/other-model"]\n')
    editor = Editor()

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(conn, sid, "echo hi for me")
            seen["first"] = list(editor.updates)
            await prompt(conn, sid, "once more")
            seen["titles"] = editor.of("session_info_update")
            answer = await conn.set_config_option(config_id="reasoning_effort",
                                                  session_id=sid, value="low")
            seen["effort"] = answer.config_options
            with pytest.raises(RequestError) as bad:
                await conn.set_config_option(config_id="reasoning_effort", session_id=sid,
                                             value="extreme")
            seen["bad"] = bad.value
            await conn.set_config_option(config_id="mode", session_id=sid, value="plan")
            await conn.set_session_mode(session_id=sid, mode_id="auto")
            await prompt(conn, sid, "/model openai/other-model")
            seen["errors_from"] = len(editor.updates)
            await prompt(conn, sid, "/model openai/fake-model")
            await prompt(conn, sid, "break please")
        return seen

    seen = asyncio.run(scenario())
    first = [u for _, u in seen["first"]]
    replies = [u for u in first if u.session_update == "agent_message_chunk"]
    before = [u.message_id for u in replies if u.content.text in "Let me echo."]
    after = [u.message_id for u in replies if u.content.text in "It said hi."]
    assert before and after and len(set(before)) == 1 and len(set(after)) == 1
    assert before[0] != after[0]  # the reply after the tool's result is a new message
    usage = [u for u in first if u.session_update == "usage_update"]
    assert usage and all(u.size == 64000 and u.used > 0 for u in usage)
    assert [t.title for t in seen["titles"]] == ["echo hi for me"]  # told once
    values = {o.id: o.current_value for o in seen["effort"]}
    assert values["reasoning_effort"] == "low"
    assert seen["bad"].code == -32602 and "high" in str(seen["bad"].data)
    modes = [u.current_mode_id for u in editor.of("current_mode_update")]
    assert modes[-2:] == ["plan", "auto"]
    told = editor.of("config_option_update")
    shown = [{o.id: o.current_value for o in u.config_options} for u in told]
    assert any(s["mode"] == "auto" for s in shown)
    assert any(s["model"] == "openai/other-model" for s in shown)
    # the provider's error: tui-agent's own message, marked, never thinking
    errors = [u for u in editor.own() if u.field_meta == {"tuiAgent": {"kind": "error"}}]
    assert errors and "provider broke" in errors[-1].content.text
    assert "provider broke" not in editor.text("agent_thought_chunk")


def test_a_model_without_its_key_needs_authentication(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "config.toml"
    conf.write_text('[model]\nname = "anthropic/claude-sonnet-4-5"\n', encoding="utf-8")

    async def scenario() -> tuple[RequestError, RequestError]:
        async with running(Editor(), conf, cwd=tmp_path) as (conn, _):
            with pytest.raises(RequestError) as no_session:
                await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            with pytest.raises(RequestError) as no_auth:
                await conn.authenticate(method_id="env-key")
            return no_session.value, no_auth.value

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for refused in asyncio.run(scenario()):
        assert refused.code == -32000 and "ANTHROPIC_API_KEY" in str(refused.data)

    async def with_key() -> str:
        async with running(Editor(), conf, cwd=tmp_path) as (conn, _):
            await conn.authenticate(method_id="env-key")
            return (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    assert asyncio.run(with_key())


def test_the_terminal_login_keeps_the_models_key(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """What an editor's terminal method runs (``tui-agent acp --terminal-login``): asked
    for the key, kept (here in the state folder's file: the tests have no keyring), and
    the next ``tui-agent acp`` opens a session with it."""
    conf = tmp_path / "config.toml"
    conf.write_text('[model]\nname = "anthropic/claude-sonnet-4-5"\n', encoding="utf-8")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # a new session: no controlling terminal, so getpass reads the key from stdin
    done = subprocess.run([*REAL, "acp", "--config", str(conf), "--terminal-login"],
                          input="sk-ant-kept-by-login\n", capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, start_new_session=True)
    assert done.returncode == 0, done.stderr
    assert "ANTHROPIC_API_KEY" in done.stderr and "is kept" in done.stderr
    assert "sk-ant-kept-by-login" not in done.stderr + done.stdout
    kept_in = paths.state_dir() / "oauth-tokens.json"
    assert "sk-ant-kept-by-login" in kept_in.read_text(encoding="utf-8")
    assert stat.S_IMODE(kept_in.stat().st_mode) == 0o600  # the key is the user's alone

    async def opened() -> str:
        async with running(Editor(), conf, cwd=tmp_path) as (conn, _):
            await conn.authenticate(method_id="env-key")
            return (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

    assert asyncio.run(opened())
    again = subprocess.run([*REAL, "acp", "--config", str(conf), "--terminal-login"],
                           input="", capture_output=True, text=True, timeout=120,
                           cwd=tmp_path, start_new_session=True,
                           env={**os.environ, "ANTHROPIC_API_KEY": "sk-ant-env"})
    assert again.returncode == 0 and "is set in this environment" in again.stderr


def test_the_reasoning_levels_are_those_the_model_takes(fake_llm: FakeLLM,
                                                        tmp_path: Path) -> None:
    """A model litellm knows not to reason is offered ``default`` alone, once litellm has
    said (a ``config_option_update``); one that reasons is offered the levels."""
    conf = config(tmp_path, fake_llm, extra='choices = ["openai/o3-mini"]\n')
    conf.write_text(conf.read_text().replace("openai/fake-model", "openai/gpt-4o-mini"))
    editor = Editor()

    def levels(options: list[Any]) -> list[str]:
        return next([v.value for v in o.options] for o in options if o.id == "reasoning_effort")

    def told() -> list[list[str]]:
        return [levels(u.config_options) for u in editor.of("config_option_update")]

    async def scenario() -> tuple[list[str], list[list[str]]]:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await editor.until(lambda: told() != [], timeout=120)
            switched = await conn.set_config_option(config_id="model", session_id=sid,
                                                    value="openai/o3-mini")
            await conn.set_config_option(config_id="model", session_id=sid,
                                         value="openai/gpt-4o-mini")
            # the levels are learned one model at a time, in the order chosen: an update
            # for o3-mini (none is due: it takes every level) would come before this one
            await editor.until(lambda: len(told()) == 2, timeout=120)
            return levels(switched.config_options), told()

    reasoning, updates = asyncio.run(scenario())
    assert updates == [["default"], ["default"]]
    assert reasoning == ["default", "none", "minimal", "low", "medium", "high"]


def test_cancel_request_stops_a_prompt(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``$/cancel_request`` naming a running ``session/prompt`` stops the turn as
    ``session/cancel`` does: the prompt answers ``cancelled``."""
    fake_llm.push(Reply(text="never finished", hang=True))
    conf = config(tmp_path, fake_llm)
    editor = Editor()

    async def scenario() -> str:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            # SDK 0.12.1's client has no cancellation of a request: its next request id,
            # which the prompt just below takes, is read, and the notification sent raw
            request_id = conn._conn._next_request_id
            turn = asyncio.ensure_future(prompt(conn, sid, "go"))
            await editor.until(lambda: fake_llm.requests != [])
            await conn._conn.send_notification("$/cancel_request", {"requestId": request_id})
            return await turn

    assert asyncio.run(scenario()) == "cancelled"
