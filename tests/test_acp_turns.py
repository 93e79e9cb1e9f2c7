"""``tui-agent acp`` driven by the ACP SDK's client side: a prompt turn streams the reply
as ``agent_message_chunk`` and the thinking as ``agent_thought_chunk`` and ends
``end_turn``; the session offers its slash commands (with the servers' MCP prompts) and
code mode as a config option (``session/set_config_option`` switches it; the session
modes are the permission modes, tests/test_acp_modes.py); ``@`` files are read through the
editor's ``fs/read_text_file`` when it offers it (an unsaved buffer wins over the disk)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.fakes.llm_server import FakeLLM, Reply

pytestmark = pytest.mark.slow


def user_text(fake: FakeLLM, index: int = -1) -> str:
    return json.dumps(fake.requests[index]["messages"][-1]["content"])


def test_a_turn_streams_the_reply_and_the_thinking(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(reasoning="The capital of France... Paris.", text="Paris, of course."))
    editor = Editor()

    async def scenario() -> str:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            return await prompt(conn, session.session_id, "capital of France?")

    assert asyncio.run(scenario()) == "end_turn"
    assert editor.text() == "Paris, of course."
    assert editor.text("agent_thought_chunk") == "The capital of France... Paris."
    kinds = editor.kinds()
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")
    assert "capital of France?" in user_text(fake_llm)


def test_commands_and_the_code_mode_option(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="direct"), Reply(text="scripted"))
    editor = Editor()

    async def scenario() -> list[str]:
        conf = config(tmp_path, fake_llm, fake_server_toml())
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            option = {o.id: o for o in session.config_options or []}["code_mode"]
            assert option.current_value == "tools"
            assert [o.value for o in option.options] == ["tools", "code"]
            sid = session.session_id
            await editor.until(lambda: any(c.name == "fake:greet" for u in editor.of(
                "available_commands_update") for c in u.available_commands))
            await prompt(conn, sid, "one")
            answer = await conn.set_config_option(config_id="code_mode", session_id=sid,
                                                  value="code")
            now = {o.id: o.current_value for o in answer.config_options or []}
            assert now["code_mode"] == "code"
            await prompt(conn, sid, "two")
            last = editor.of("available_commands_update")[-1]
            return [c.name for c in last.available_commands]

    names = asyncio.run(scenario())
    assert {"compact", "context", "code", "model", "fake:greet"} <= set(names)
    assert editor.of("current_mode_update") == []  # the permission mode did not change
    first = {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    second = {t["function"]["name"] for t in fake_llm.requests[1]["tools"]}
    assert "fake__echo" in first and "executeToolCode" not in first
    assert "executeToolCode" in second and "fake__echo" not in second


def test_slash_code_and_context_answer_in_the_reply(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="hi"))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm, fake_server_toml()),
                           cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(conn, sid, "hello")
            assert await prompt(conn, sid, "/context") == "end_turn"
            assert await prompt(conn, sid, "/code on") == "end_turn"

    asyncio.run(scenario())
    assert "tokens: system" in editor.text()
    assert "Code mode is on" in editor.text()
    shown = [{o.id: o.current_value for o in u.config_options}["code_mode"]
             for u in editor.of("config_option_update")]
    assert shown == ["code"] and editor.of("current_mode_update") == []
    assert len(fake_llm.requests) == 1  # the commands never reached the model


@pytest.mark.parametrize("offers_fs", [True, False])
def test_at_files_come_from_the_editors_buffer_when_it_offers_one(
        fake_llm: FakeLLM, tmp_path: Path, offers_fs: bool) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("what the disk holds\n", encoding="utf-8")
    fake_llm.push(Reply(text="read it"))
    editor = Editor(buffers={str(notes): "the unsaved buffer\n"})

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path,
                           fs=offers_fs) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            assert await prompt(conn, sid, "summarize @notes.txt") == "end_turn"

    asyncio.run(scenario())
    sent = user_text(fake_llm)
    if offers_fs:
        assert editor.read == [str(notes)]
        assert "the unsaved buffer" in sent and "what the disk holds" not in sent
    else:
        assert editor.read == []
        assert "what the disk holds" in sent
    assert 'path=\\"notes.txt\\"' in sent


def test_max_depth_ends_the_turn_as_max_turn_requests(fake_llm: FakeLLM,
                                                      tmp_path: Path) -> None:
    from tests.fakes.llm_server import FakeToolCall

    fake_llm.push(*[Reply(tool_calls=[FakeToolCall("fake__add", {"a": i, "b": 1}, id=f"a{i}")])
                    for i in range(3)])
    editor = Editor()
    conf = config(tmp_path, fake_llm, fake_server_toml("fake", more='auto = ["add"]\n'),
                  extra="[agent]\nmax_depth = 2\n")

    async def scenario() -> str:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            return await prompt(conn, sid, "add forever")

    assert asyncio.run(scenario()) == "max_turn_requests"
    assert [u.tool_call_id for u in editor.of("tool_call")] == ["a0", "a1"]


def test_an_mcp_prompt_runs_as_a_slash_command(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="Hello, Ada!"))
    editor = Editor()

    async def scenario() -> str:
        async with running(editor, config(tmp_path, fake_llm, fake_server_toml()),
                           cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await editor.until(lambda: any(c.name == "fake:greet" for u in editor.of(
                "available_commands_update") for c in u.available_commands))
            return await prompt(conn, sid, "/fake:greet name=Ada")

    assert asyncio.run(scenario()) == "end_turn"
    assert "Say hello to Ada." in user_text(fake_llm)
    assert editor.text() == "Hello, Ada!"


def test_secrets_are_masked_and_control_characters_removed(fake_llm: FakeLLM,
                                                           tmp_path: Path) -> None:
    secret = "sk-test-key"  # the config's api_key: a secret of the run
    fake_llm.push(Reply(text=f"the key is {secret} \x1b]0;pwned\x07and \x1b[31mred\x1b[0m",
                        chunk_chars=3))
    editor = Editor()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(conn, sid, "tell me")

    asyncio.run(scenario())
    shown = editor.text()
    assert secret not in shown and "the key is" in shown
    assert "\x1b" not in shown and "\x07" not in shown and "red" in shown


def test_the_model_option_switches_the_model(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="one"), Reply(text="two"))
    editor = Editor()
    conf = config(tmp_path, fake_llm, extra='choices = ["openai/other-model"]\n')

    async def scenario() -> None:
        from acp import RequestError

        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            option = (session.config_options or [])[0]
            assert (option.id, option.current_value) == ("model", "openai/fake-model")
            assert [o.value for o in option.options] == ["openai/fake-model",
                                                         "openai/other-model"]
            sid = session.session_id
            await prompt(conn, sid, "first")
            answer = await conn.set_config_option(config_id="model", session_id=sid,
                                                  value="openai/other-model")
            assert (answer.config_options or [])[0].current_value == "openai/other-model"
            with pytest.raises(RequestError):
                await conn.set_config_option(config_id="colour", session_id=sid, value="x")
            await prompt(conn, sid, "second")

    asyncio.run(scenario())
    assert [r["model"] for r in fake_llm.requests] == ["fake-model", "other-model"]


def test_compact_errors_are_masked_and_cleaned(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``/compact`` whose summary request fails with an error echoing the api key: the
    reply names the failure without the key or the error's escape sequences."""
    secret = "sk-test-key"
    fake_llm.push(Reply(text="one"), Reply(text="two"),
                  Reply(status=400, error_message=f"bad key {secret} \x1b]0;pwned\x07here"))
    editor = Editor()

    async def scenario() -> str:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await prompt(conn, sid, "first")
            await prompt(conn, sid, "second")
            return await prompt(conn, sid, "/compact")

    assert asyncio.run(scenario()) == "end_turn"
    assert len(fake_llm.requests) == 3  # the summary was asked for, and failed
    shown = editor.text()
    assert "could not compact" in shown and "bad key" in shown
    assert secret not in shown and "\x1b" not in shown and "\x07" not in shown
    # marked as tui-agent's error, as a turn's errors are, not as the command's answer
    errors = [u for u in editor.own() if u.field_meta == {"tuiAgent": {"kind": "error"}}]
    assert errors and "could not compact" in errors[0].content.text


@pytest.mark.parametrize(("finish", "stop"), [("length", "max_tokens"),
                                              ("content_filter", "refusal")])
def test_a_cut_reply_ends_the_turn_as_max_tokens_or_refusal(
        fake_llm: FakeLLM, tmp_path: Path, finish: str, stop: str) -> None:
    """The provider's finish reason reaches the editor as the prompt's stop reason, the
    text so far streamed."""
    fake_llm.push(Reply(text="The first half of", finish_reason=finish))
    editor = Editor()

    async def scenario() -> str:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            return await prompt(conn, sid, "a long story")

    assert asyncio.run(scenario()) == stop
    assert editor.text().startswith("The first half of")
