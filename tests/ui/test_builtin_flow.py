"""The built-in server ``local`` in the app, with no server configured: an ``edit`` of
``local`` stops at the approval modal with the diff of the change (computed from the
call's arguments), and once approved the file is changed; a ``read`` before it ran
without asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project, local_table
from tests.ui.kit import SIZE, finish, make_app, ready, send, until, write_config
from tui_agent.ui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_an_edit_of_local_asks_with_its_diff(tmp_path: Path, fake_llm: FakeLLM,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = local_project(tmp_path, monkeypatch, {"src/app.py": "def main():\n    return 42\n"})
    target = project / "src" / "app.py"
    fake_llm.push(
        Reply(tool_calls=[FakeToolCall("local__read", {"path": "src/app.py"}, id="r")]),
        Reply(tool_calls=[FakeToolCall("local__edit", {
            "path": "src/app.py", "old_string": "return 42", "new_string": "return 43"},
            id="e")]),
        Reply(text="done"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra=local_table())
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "make it 43")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen)
                    and bool(app.screen.query(".diff")), 60, "the modal and its diff")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen) and modal.call.name == "local__edit"
        diff = str(modal.query_one(".diff").render())
        assert "-    return 42" in diff and "+    return 43" in diff
        read = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert read and "     2\t    return 42" in str(read[0]["content"])  # ran unasked
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended == 1, 30)
        assert target.read_text(encoding="utf-8") == "def main():\n    return 43\n"
        await finish(app)
