"""``/resume``'s picker: this project's conversations first, each with its date, size and
title (the first prompt), and a last row that shows every folder's, each with its folder.
Real session files written by the agent's writer; the real app with the pilot; an SVG
snapshot of each view."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from tests.ui.kit import finish, make_app, noted, ready, send, steady_cursor, until, write_config
from tui_agent.config import paths
from tui_agent.core.session import SessionWriter
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.picker import Picker
from tui_agent.ui.widgets.prompt import PromptInput

SMALL = (80, 24)
CHATS = [  # stem, folder under HOME (None: elsewhere), first prompt, when
    ("20240301-093000-aaaaaa", "app", "fix the login page\nand its \x1b[31mtests", (3, 1, 9)),
    ("20240302-100000-bbbbbb", "app/docs", "write the install docs", (3, 2, 10)),
    ("20240303-110000-cccccc", None, "plan the garden for spring", (3, 3, 11)),
    ("20240304-120000-dddddd", "other", "what is a monad", (3, 4, 12)),
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is tmp_path; the app runs in ~/app (a git repository); four conversations,
    two of them started in ~/app or below it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    app_dir = tmp_path / "app"
    (app_dir / ".git").mkdir(parents=True)
    monkeypatch.chdir(app_dir)
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    for stem, folder, first, (month, day, hour) in CHATS:
        cwd = str(tmp_path / folder) if folder else "/srv/garden"
        writer = SessionWriter.create(store / f"{stem}.jsonl", {"model": "openai/x", "cwd": cwd})
        writer.message({"role": "user", "content": first})
        writer.message({"role": "assistant", "content": "done"})
        writer.close()
        stamp = datetime(2024, month, day, hour).timestamp()
        os.utime(writer.path, (stamp, stamp))
    return tmp_path


def rows(app: AgentApp) -> list[str]:
    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def picker_open(app: AgentApp, title: str) -> Callable[[], bool]:
    return lambda: (isinstance(app.screen, Picker) and app.screen.is_mounted
                    and app.screen.title_text.startswith(title))


@pytest.mark.anyio
async def test_resume_lists_this_projects_first_and_then_every_folder(project: Path) -> None:
    app = make_app(write_config(project / "c.toml"))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/resume")
        await until(pilot, picker_open(app, "Resume a conversation in app"), timeout=30)
        shown = rows(app)
        assert len(shown) == 3
        assert shown[0].startswith("  2024-03-02") and shown[0].endswith("write the install docs")
        assert "2 msgs" in shown[0]
        assert shown[1].endswith("fix the login page and its tests")  # one line, inert
        assert shown[2] == "  … every folder: 2 more conversations"

        await pilot.press("tab", "end", "enter")
        await until(pilot, picker_open(app, "Resume a conversation (every folder"))
        shown = rows(app)
        titles = ["write the install docs", "fix the login page and its tests",
                  "what is a monad", "plan the garden for spring"]
        assert len(shown) == 4
        assert all(r.endswith(t) for r, t in zip(shown, titles, strict=True))
        assert "~/app/docs" in shown[0] and "~/other" in shown[2] and "/srv/garden" in shown[3]

        await pilot.press(*"monad", "enter")
        await noted(pilot, app, "resumed 20240304-120000-dddddd")
        await send(pilot, app, "/resume all")
        await until(pilot, picker_open(app, "Resume a conversation (every folder"))
        await pilot.press("escape")
        await finish(app)


@pytest.mark.parametrize("every", [False, True])
def test_snapshot_resume_picker(snap_compare: Callable[..., bool], project: Path,
                                every: bool) -> None:
    """/resume at 80x24: this project's conversations with dates, sizes and titles and
    the row to every folder's; and (``/resume all``) every folder's with their folders."""
    async def before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, AgentApp)
        await ready(pilot, app)
        steady_cursor(app.chat.query_one(PromptInput))
        await send(pilot, app, "/resume all" if every else "/resume")
        await until(pilot, picker_open(app, "Resume a conversation"), timeout=30)
        for field in app.screen.query(Input):  # a blinking cursor drew by the clock
            field.cursor_blink = False
        await pilot.pause(0.2)

    assert snap_compare(make_app(write_config(project / "c.toml", model="openai/snap")),
                        terminal_size=SMALL, run_before=before)
