"""Hooks in the app: a Notification hook runs when the approval modal opens (the person is
being asked), a PreToolUse hook's ``ask`` brings the modal with its reason, the session's
start fires SessionStart, and so does /new, whose message and context arrive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.hook_kit import decider, hooks_toml, script
from tests.ui.kit import SIZE, finish, make_app, noted, ready, send, until, write_config
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


async def test_session_start_after_new_shows_its_message_and_adds_its_context(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``/new`` (Claude Code's ``/clear``) fires SessionStart with source ``clear``: what
    the hook says to the person (``systemMessage``) shows in the new transcript, and its
    ``additionalContext`` reaches the model before the next prompt, even one sent while
    the hook still runs."""
    start = script(tmp_path, "start.sh", "#!/bin/bash\nINPUT=$(cat)\nsleep 4\n"
                   "echo '{\"systemMessage\": \"fresh start: 3 tests fail\", "
                   "\"hookSpecificOutput\": {\"hookEventName\": \"SessionStart\", "
                   "\"additionalContext\": \"the branch is main\"}}'\n")
    config = write_config(tmp_path / "config.toml", base_url=fake_llm.base_url,
                          extra="\n" + hooks_toml("SessionStart", str(start), "clear"))
    fake_llm.push(Reply(text="hello"))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/new")
        await send(pilot, app, "which branch?")  # at once: the turn waits for the hook
        await noted(pilot, app, "fresh start: 3 tests fail", 30)
        await until(pilot, lambda: app.turns_ended == 1, 60, "the turn")
        sent = fake_llm.requests[0]["messages"]
        assert "the branch is main" in json.dumps(sent[:-1])
        assert sent[-1]["content"] == "which branch?"
        await finish(app)
