"""``/add-dir`` in the app with the real built-in server ``local``: a folder outside the
project is refused to the model's ``local__read`` until ``/add-dir`` adds it, then the
same read runs; a missing folder or a file is a clear line, nothing added. The scripted
model; the real app with the pilot."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project, local_table
from tests.ui.kit import SIZE, finish, make_app, noted, ready, send, until, write_config
from tui_agent.ui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def local_config(tmp_path: Path, base_url: str) -> Path:
    """A config whose built-in server carries the test's tag (and time to start)."""
    return write_config(tmp_path / "c.toml", base_url=base_url, extra=local_table())


def tool_results(fake_llm: FakeLLM, request: int) -> list[str]:
    return [str(m["content"]) for m in fake_llm.requests[request]["messages"]
            if m["role"] == "tool"]


async def test_an_added_folder_is_read_by_the_builtin_tools(
        tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    local_project(tmp_path, monkeypatch)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.md").write_text("buy milk\n", encoding="utf-8")
    read = {"path": str(other / "todo.md")}
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__read", read, id="r1")]),
                  Reply(text="I may not read it"),
                  Reply(tool_calls=[FakeToolCall("local__read", read, id="r2")]),
                  Reply(text="milk"))
    app = make_app(local_config(tmp_path, fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "what is in my todo?")
        await until(pilot, lambda: app.turns_ended == 1, 60, "the first turn")
        refused = tool_results(fake_llm, 1)
        assert refused and "buy milk" not in refused[0] and "--add-dir" in refused[0]

        await send(pilot, app, f"/add-dir {other}")
        line = await noted(pilot, app, "added ")
        assert str(other) in line and str(other) in app.backend.settings.config.agent.roots
        await send(pilot, app, "and now?")
        await until(pilot, lambda: app.turns_ended == 2
                    or isinstance(app.screen, ApprovalScreen), 60, "the second turn")
        assert not isinstance(app.screen, ApprovalScreen)  # a read in a root: unasked
        assert "buy milk" in tool_results(fake_llm, 3)[-1]
        await finish(app)


async def test_add_dir_names_a_missing_folder_or_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        roots = list(app.backend.settings.config.agent.roots)
        await send(pilot, app, "/add-dir nowhere")
        missing = await noted(pilot, app, "/add-dir nowhere")
        assert "no such folder" in missing and str(tmp_path / "nowhere") in missing
        await send(pilot, app, "/add-dir notes.txt")
        file = await noted(pilot, app, "/add-dir notes.txt")
        assert "is a file, not a folder" in file
        await send(pilot, app, "/add-dir")
        assert "takes a folder" in await noted(pilot, app, "/add-dir takes")
        assert app.backend.settings.config.agent.roots == roots
        await finish(app)
