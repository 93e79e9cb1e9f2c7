"""In the app, with the REAL built-in server whose ``bwrap`` fails in its own ``PATH``
only (bubblewrap works in the app's): a ``shell`` call that ``auto`` lists still stops
at the modal, which says why and offers no "always allow"; approved once, it runs, and
the next call asks again. ``run``'s side: tests/test_unsandboxed_shell.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project
from tests.test_unsandboxed_shell import UNSANDBOXED, unsandboxed_local
from tests.ui.kit import SIZE, finish, make_app, ready, send, until, write_config
from tui_agent.ui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_the_modal_asks_for_every_unsandboxed_command(
        tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    project = local_project(tmp_path, monkeypatch)
    fake_llm.push(
        Reply(tool_calls=[FakeToolCall("local__shell", {"command": "echo one > one.txt"},
                                       id="s1")]),
        Reply(tool_calls=[FakeToolCall("local__shell", {"command": "echo two > two.txt"},
                                       id="s2")]),
        Reply(text="done"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          extra=unsandboxed_local(tmp_path))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "run them")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), 60, "the modal")
        modal = app.screen
        why = str(modal.query_one(".why").render())
        assert why == f"Asking because: {UNSANDBOXED}", why
        keys = str(modal.query_one(".keys").render())
        assert "approve once" in keys and "always allow" not in keys, keys
        await pilot.press("a")  # not offered: nothing happens
        await pilot.pause()
        assert app.screen is modal
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen)
                    and app.screen is not modal, 60, "the second call's modal")
        assert (project / "one.txt").read_text() == "one\n"
        assert UNSANDBOXED in str(app.screen.query_one(".why").render())
        await pilot.press("n")
        await until(pilot, lambda: app.turns_ended == 1, 60, "the turn")
        assert not (project / "two.txt").exists()
        await finish(app)
