"""Hooks in the app: a Notification hook runs when the approval modal opens (the person is
being asked), a PreToolUse hook's ``ask`` brings the modal with its reason, and the
session's start fires SessionStart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.hook_kit import decider, hooks_toml, script
from tests.ui.kit import SIZE, finish, make_app, ready, send, until, write_config
from tui_agent.ui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_notification_hook_runs_when_the_modal_opens(fake_llm: FakeLLM,
                                                             tmp_path: Path) -> None:
    told = tmp_path / "told.jsonl"
    notify = script(tmp_path, "notify.sh",
                    f"#!/bin/bash\nINPUT=$(cat)\necho \"$INPUT\" >> {told}\n")
    ask = decider(tmp_path, "ask", "a hook wants you to look at this")
    hooks = (hooks_toml("Notification", str(notify), "permission_prompt")
             + hooks_toml("SessionStart", str(notify))
             + hooks_toml("PreToolUse", f"python3 {ask}", "mcp__t__add"))
    config = write_config(tmp_path / "config.toml", base_url=fake_llm.base_url,
                          servers={"t": []}, extra="\n" + hooks)
    config.write_text(config.read_text().replace('startup_timeout = 20',
                                                 'startup_timeout = 20\nauto = ["add"]'))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__add", {"a": 2, "b": 3}, id="c1")]),
                  Reply(text="five"))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await until(pilot, told.exists, 30, "the SessionStart hook")
        await send(pilot, app, "add them")
        # 60 s: the server's start, the model's reply and a python3 hook, on a busy machine
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), 60, "the modal")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen)
        assert modal.call.why == "a hook wants you to look at this"  # asked, though auto
        await until(pilot, lambda: len(told.read_text().splitlines()) == 2, 30,
                    "the Notification hook")
        start, note = (json.loads(line) for line in told.read_text().splitlines())
        assert (start["hook_event_name"], start["source"]) == ("SessionStart", "startup")
        assert note["hook_event_name"] == "Notification"
        assert note["notification_type"] == "permission_prompt"
        assert note["message"] == "tui-agent needs your permission to use t__add"
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended == 1, 60)
        await finish(app)


async def test_a_notification_hook_runs_when_a_servers_form_opens(fake_llm: FakeLLM,
                                                                  tmp_path: Path) -> None:
    from tests.ui.kit import shown, with_asking_server
    from tui_agent.ui.screens.elicit import ElicitScreen

    told = tmp_path / "told.jsonl"
    notify = script(tmp_path, "notify.sh",
                    f"#!/bin/bash\nINPUT=$(cat)\necho \"$INPUT\" >> {told}\n")
    config = with_asking_server(tmp_path / "config.toml", fake_llm.base_url)
    config.write_text(config.read_text() + "\n"
                      + hooks_toml("Notification", str(notify), "elicitation_dialog"))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__book", {}, id="b")]),
                  Reply(text="booked"))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "book")
        await shown(pilot, app, ElicitScreen, "the form")
        await until(pilot, told.exists, 30, "the Notification hook")
        note = json.loads(told.read_text().splitlines()[0])
        assert (note["hook_event_name"], note["notification_type"]) == \
            ("Notification", "elicitation_dialog")
        assert note["message"].startswith("asking asks for your input: ")
        await pilot.press("ctrl+d")  # declined: the turn goes on
        await until(pilot, lambda: app.turns_ended == 1, 60)
        await finish(app)
