"""A sub-agent over ACP, driven by the ACP SDK's own client against a real ``tui-agent
acp``: the parent's ``agent`` call is one tool call (kind ``think``) whose updates carry
the sub-agent's progress and end; each call the sub-agent makes is a tool call of its own
under ``<agent call>/<call>`` (its model's ids may repeat the parent's), asked about with
the same id and saying which agent asks; the sub-agent's text never streams as the
parent's reply; and a loaded session replays the agent call as it was shown live."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.subagent_kit import CHILD, HELPER, agent_file, call_agent
from tui_agent.acp.updates import replay
from tui_agent.config import paths
from tui_agent.core.session import load

pytestmark = pytest.mark.slow


@pytest.fixture
def child() -> Iterator[FakeLLM]:
    with FakeLLM(model="child-model") as fake:
        yield fake


def texts(update: object) -> str:
    return "\n".join(c.content.text for c in (getattr(update, "content", None) or [])
                     if getattr(c, "type", "") == "content")


def test_a_sub_agent_is_one_tool_call_with_its_progress_and_its_own_calls(
        fake_llm: FakeLLM, child: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="Delegating.", tool_calls=[
        FakeToolCall("r__echo", {"text": "mine"}, id="c1"),
        call_agent("call_1", "Echo 'hi' please.\nThen report.", "helper")]),
        Reply(text="The helper says hi."))
    child.push(Reply(text="Echoing.", tool_calls=[FakeToolCall("r__echo", {"text": "hi"},
                                                               id="c1")]),
               Reply(text="It echoed: hi"))
    agent_file("helper", HELPER)
    conf = config(tmp_path, fake_llm, servers=fake_server_toml("r"), extra=(
        f'\n[models."{CHILD}"]\napi_base = "{child.base_url}"\napi_key = "sk-child"\n'
        "max_retries = 0\n"))
    editor = Editor(["allow_once", "allow_once"])

    async def scenario() -> tuple[str, str]:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            return sid, await prompt(conn, sid, "delegate it")

    sid, stop = asyncio.run(scenario())
    assert stop == "end_turn"
    assert child.requests[0]["model"] == "child-model", "its requests reach its own model"
    started = {u.tool_call_id: u for u in editor.of("tool_call")}
    assert set(started) == {"c1", "call_1", "call_1/c1"}, "the same model id, two calls"
    assert started["call_1"].kind == "think"
    assert started["call_1"].title == "agent helper: Echo 'hi' please."
    assert started["call_1/c1"].title == "r: echo (for the agent helper)"
    progress = [texts(u) for u in editor.of("tool_call_update")
                if u.tool_call_id == "call_1" and texts(u)]
    assert progress[0] == f"helper on {CHILD}"
    assert any("→ r__echo" in p for p in progress), progress
    ended = [p for p in progress if p.startswith("helper done")]
    assert ended and "2 turns" in ended[0] and "tokens" in ended[0] and "tools: r__echo" \
        in ended[0], progress
    done = {u.tool_call_id: texts(u) for u in editor.of("tool_call_update")
            if u.status == "completed"}
    assert done["call_1/c1"] == "hi" and done["c1"] == "mine"
    assert done["call_1"].startswith("It echoed: hi")
    # The sub-agent's question names it, under the id its tool call has.
    (own, _), (theirs, _) = editor.asked
    assert own.tool_call_id == "c1" and "sub-agent" not in texts(own)
    assert theirs.tool_call_id == "call_1/c1"
    assert theirs.title == "r: echo (for the agent helper (call_1))"
    assert "asked by the sub-agent helper (call_1)" in texts(theirs)
    # Its words are its call's result, never the parent's reply or thinking.
    assert editor.reply() == "Delegating.The helper says hi."
    assert "Echoing" not in editor.text("agent_thought_chunk")
    # session/load shows the agent call as it was shown live.
    saved = load(next(paths.sessions_dir().glob(f"*{sid}*.jsonl")))
    replayed = [u for u in replay(saved.messages, saved.calls)
                if getattr(u, "tool_call_id", "") == "call_1"]
    assert replayed[0].kind == "think" and replayed[0].title == started["call_1"].title
    assert replayed[-1].status == "completed"
