"""``w`` in the approval modal (write an allow rule for this tool with these arguments), in
the app against litellm, the scripted LLM server and our MCP server: offered where the call
only lacked an allowance, so the rule stops it asking; not offered where something asks
outright (an ask rule here), where a rule would change nothing (the key does nothing)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.ui.kit import SIZE, finish, make_app, ready, send, shown, until, write_config
from tui_agent.config import paths
from tui_agent.ui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_w_is_offered_only_where_a_rule_would_stop_the_asking(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          servers={"t": []},
                          extra='\n[permissions]\nask = ["mcp__t__echo"]\n')
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__echo", {"text": "hi"}, id="e")]),
                  Reply(tool_calls=[FakeToolCall("t__add", {"a": 2, "b": 3}, id="a")]),
                  Reply(text="done"))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "echo, then add")
        # 60 s: the server's start and the model's reply, on a busy machine
        asked = await shown(pilot, app, ApprovalScreen, "the echo question", 60)
        assert asked.call.name == "t__echo" and asked.call.why.startswith("asks: ask rule")
        assert not asked.rule and "always with these arguments" not in str(
            asked.query_one(".keys").render())
        await pilot.press("w")  # not offered: the question stays
        await pilot.pause(0.2)
        assert app.screen is asked
        await pilot.press("y")
        asked = await shown(pilot, app, ApprovalScreen, "the add question", 60,
                            replacing=asked)
        assert asked.call.name == "t__add" and asked.rule == "mcp__t__add(a=2, b=3)"
        assert "always with these arguments" in str(asked.query_one(".keys").render())
        await pilot.press("w")
        await until(pilot, lambda: app.turns_ended == 1, 60, "the turn")
        user = tomllib.loads(paths.default_config_file().read_text())
        assert user["permissions"]["allow"] == ["mcp__t__add(a=2, b=3)"]
        await finish(app)
