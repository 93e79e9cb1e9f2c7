"""``/rewind`` in the app, on a resumed conversation: its user messages in a picker, a
second choice to restore files, a new branch (the old session file kept), the files the
built-in server changed since then put back, those another server wrote named as not
restorable. A real session file, the real checkpoint store, the real app with the pilot;
an SVG snapshot of the picker."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from tests.test_rewind_safety import keep_as
from tests.ui.kit import finish, make_app, noted, ready, send, steady_cursor, until, write_config
from tui_agent.builtin.checkpoints import Checkpoints, store_for
from tui_agent.config import paths
from tui_agent.core.session import SessionWriter, load
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.picker import Picker
from tui_agent.ui.widgets.prompt import PromptInput


def call(call_id: str, name: str, **arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


@pytest.fixture
def saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SessionWriter:
    """A conversation in ``tmp_path/project``: the built-in server wrote ``app.py`` before
    the second message and again after it; another server wrote ``other.txt`` after it."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    store = Checkpoints(store_for(project))
    source = project / "app.py"
    writer = SessionWriter.create(paths.sessions_dir() / "20240301-093000-aaaaaa.jsonl",
                                  {"model": "openai/x", "cwd": str(project)})
    writer.message({"role": "user", "content": "make app.py print hello"})
    keep_as(store, source, writer.id, writer.next_seq())
    source.write_text("print('hello')\n")
    writer.message({"role": "assistant", "content": "done: app.py prints hello"})
    writer.message({"role": "user", "content": "now make it \x1b[31mshout"})
    writer.message({"role": "assistant", "content": "", "tool_calls": [
        call("c1", "local__write", path="app.py", content="print('HELLO')\n"),
        call("c2", "other__write_file", path="other.txt", content="x")]})
    keep_as(store, source, writer.id, writer.next_seq())  # tagged as the server tags it
    source.write_text("print('HELLO')\n")
    (project / "other.txt").write_text("x")
    writer.message({"role": "tool", "tool_call_id": "c1", "content": "wrote app.py"})
    writer.message({"role": "tool", "tool_call_id": "c2", "content": "wrote other.txt"})
    writer.message({"role": "assistant", "content": "it shouts now"})
    writer.close()
    return writer


def picker_open(app: AgentApp, title: str) -> Callable[[], bool]:
    return lambda: (isinstance(app.screen, Picker) and app.screen.is_mounted
                    and app.screen.title_text.startswith(title))


def rows(app: AgentApp) -> list[str]:
    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


@pytest.mark.anyio
async def test_rewind_branches_and_restores_the_builtin_tools_files(
        saved: SessionWriter, tmp_path: Path) -> None:
    project = tmp_path / "project"
    app = make_app(write_config(tmp_path / "c.toml"), resume=saved.id)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        await noted(pilot, app, f"resumed {saved.id}")
        await send(pilot, app, "/rewind")
        await until(pilot, picker_open(app, "Rewind to before which message?"))
        shown = rows(app)
        assert len(shown) == 2
        assert shown[0].endswith("now make it shout")  # newest first, inert
        assert shown[1].endswith("make app.py print hello")

        await pilot.press("enter")
        await until(pilot, picker_open(app, "Restore the files too?"))
        assert [r.strip() for r in rows(app)] == ["the conversation only (files stay as they are)",
                             "the conversation and 1 file (app.py)"]
        await pilot.press("down", "enter")
        said = await noted(pilot, app, "rewound to before your message")

        assert "restored 1 file: app.py" in said
        assert "not restorable: other.txt (written by other's tools)" in said
        assert (project / "app.py").read_text() == "print('hello')\n"
        assert (project / "other.txt").exists()
        prompt = app.chat.query_one(PromptInput)
        assert prompt.text == "now make it shout"
        branch = app.backend.agent.session
        assert branch is not None and branch.id != saved.id
        assert f"{saved.id} is kept" in said
        await finish(app)
    old, new = load(saved.path), load(branch.path)
    assert len(old.entries) == 7 and len(new.entries) == 2
    assert new.meta["branched_from"] == {"id": saved.id, "before": 2}
    assert [e.at for e in new.entries] == [e.at for e in old.entries[:2]]


@pytest.mark.anyio
async def test_rewind_of_the_conversation_only_leaves_files(
        saved: SessionWriter, tmp_path: Path) -> None:
    project = tmp_path / "project"
    app = make_app(write_config(tmp_path / "c.toml"), resume=saved.id)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/rewind")
        await until(pilot, picker_open(app, "Rewind to before which message?"))
        await pilot.press("down", "enter")  # the first message: before any change
        await until(pilot, picker_open(app, "Restore the files too?"))
        await pilot.press("enter")
        said = await noted(pilot, app, "rewound to before your message")
        assert "files left as they are: 1 file" in said
        assert (project / "app.py").read_text() == "print('HELLO')\n"
        branch = app.backend.agent.session
        assert branch is not None and branch.id != saved.id
        assert load(branch.path).entries == []  # before the first message: nothing said
        await finish(app)


@pytest.mark.anyio
async def test_rewind_with_nothing_said_says_so(tmp_path: Path) -> None:
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/rewind")
        await noted(pilot, app, "nothing to rewind yet")
        await finish(app)


def test_snapshot_rewind_picker(snap_compare: Callable[..., bool], tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """/rewind at 80x24 on a resumed conversation: its user messages, newest first, with
    the time each was sent, one line each (a long one cut with an ellipsis)."""
    monkeypatch.chdir(tmp_path)
    writer = SessionWriter.create(paths.sessions_dir() / "20240301-093000-bbbbbb.jsonl",
                                  {"model": "openai/x", "cwd": str(tmp_path)})
    for n, words in enumerate(["summarise README.md", "now fix the typo in its second "
                               "paragraph and check every other paragraph for the same "
                               "mistake", "thanks"]):
        at = datetime(2024, 3, 1, 9, 30 + n).timestamp()
        writer.message({"role": "user", "content": words}, at=at)
        writer.message({"role": "assistant", "content": f"reply {n}"}, at=at + 5)
    writer.close()

    async def before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, AgentApp)
        await ready(pilot, app)
        steady_cursor(app.chat.query_one(PromptInput))
        await send(pilot, app, "/rewind")
        await until(pilot, picker_open(app, "Rewind to"), timeout=30)
        for field in app.screen.query(Input):
            field.cursor_blink = False
        await pilot.pause(0.2)

    assert snap_compare(make_app(write_config(tmp_path / "c.toml", model="openai/snap"),
                                 resume=writer.id), terminal_size=(80, 24), run_before=before)
