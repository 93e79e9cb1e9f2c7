"""End to end in the app with the REAL built-in server ``local`` (no fake, no saved
session made by hand): the scripted model edits a file with ``local__edit``, approved
in the modal (the server keeps the file's content in its checkpoint store first); then
``/rewind`` to before that message, choosing the files too, puts the file back as it
was, and the conversation goes on from before the message in a new branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project, local_table
from tests.ui.kit import SIZE, finish, make_app, noted, ready, send, until, write_config
from tests.ui.test_rewind import picker_open, rows
from tui_agent.core.session import load
from tui_agent.ui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_rewind_puts_back_a_file_the_real_local_server_edited(
        tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    target = local_project(tmp_path, monkeypatch, {"app.py": "print('hello')\n"}) / "app.py"
    fake_llm.push(
        Reply(text="hi"),
        Reply(tool_calls=[FakeToolCall("local__edit", {
            "path": "app.py", "old_string": "hello", "new_string": "HELLO"}, id="e")]),
        Reply(text="it shouts now"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra=local_table())
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "hello there")
        await until(pilot, lambda: app.turns_ended == 1, 60, "the first turn")
        await send(pilot, app, "make it shout")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), 60, "the modal")
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended == 2, 30, "the edit's turn")
        assert target.read_text(encoding="utf-8") == "print('HELLO')\n"
        before = app.backend.agent.session
        assert before is not None

        await send(pilot, app, "/rewind")
        await until(pilot, picker_open(app, "Rewind to before which message?"))
        assert rows(app)[0].endswith("make it shout")
        await pilot.press("enter")
        await until(pilot, picker_open(app, "Restore the files too?"))
        assert rows(app)[1].strip() == "the conversation and 1 file (app.py)"
        await pilot.press("down", "enter")
        said = await noted(pilot, app, "rewound to before your message")
        assert "restored 1 file: app.py" in said
        assert target.read_text(encoding="utf-8") == "print('hello')\n"
        branch = app.backend.agent.session
        assert branch is not None and branch.id != before.id
        await finish(app)
    assert [e.message.get("content") for e in load(branch.path).entries] == \
        ["hello there", "hi"]
