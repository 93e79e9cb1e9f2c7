"""The ``@`` picker ranks off the UI thread (issue 33): the real FilePicker in a real app,
over a list large enough that a ranking is still under way when the next key comes. What
it shows in the end is always the typed query's ranking; enter takes a current match or
nothing; esc and closing mid-ranking or mid-listing leave nothing behind."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.app import App
from textual.widgets import OptionList

from tests.ui.kit import until
from tui_agent.core.project_files import list_files, rank
from tui_agent.ui.screens.files import SHOWN, FilePicker

pytestmark = pytest.mark.anyio

WORDS = ["app", "core", "ui", "screen", "widget", "config", "test", "util", "server",
         "client", "model", "view", "agent"]


def many(count: int = 30_000) -> list[str]:
    """``count`` distinct paths, 1 to 4 folders deep, always the same ones."""
    pick = random.Random(33)
    paths: set[str] = set()
    while len(paths) < count:
        folders = [pick.choice(WORDS) for _ in range(pick.randint(1, 4))]
        name = f"{pick.choice(WORDS)}_{pick.randint(0, 999)}{pick.choice(('.py', '.md'))}"
        paths.add("/".join([*folders, name]))
    return sorted(paths)


class Host(App[None]):
    """An app that opens the picker at once and keeps what it was dismissed with."""

    def __init__(self, picker: FilePicker) -> None:
        super().__init__()
        self.picker = picker
        self.chosen: list[str | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.picker, self.chosen.append)


def listed(picker: FilePicker) -> list[str | None]:
    options = picker.query_one(OptionList)
    return [options.get_option_at_index(i).id for i in range(options.option_count)]


def settled(app: App[None]) -> bool:
    """No worker is left running (a ranking's thread may still end its block, but a
    worker that is done can no longer show anything)."""
    return all(worker.is_finished for worker in app.workers)


def held_listing(project: Path) -> tuple[threading.Event, threading.Event, FilePicker, Host]:
    """The picker over ``project`` in an app, its listing held until ``gate`` opens;
    ``done`` is set when the listing has ended."""
    gate, done = threading.Event(), threading.Event()
    picker = FilePicker(project, lister=gated(gate, done))
    return gate, done, picker, Host(picker)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("src/app.py", "src/chat.py", "tests/test_app.py", "docs/apis.md",
                 "README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name, encoding="utf-8")
    return tmp_path


def gated(gate: threading.Event, done: threading.Event) -> Callable[[Path], list[str]]:
    """The real listing, held until ``gate`` opens (so that keys come before it ends)."""
    def lister(root: Path) -> list[str]:
        try:
            gate.wait(20)
            return list_files(root)
        finally:
            done.set()
    return lister


async def test_typing_fast_ends_on_the_typed_querys_ranking(tmp_path: Path) -> None:
    files = many()
    picker = FilePicker(tmp_path, files)
    app = Host(picker)
    async with app.run_test() as pilot:
        await until(pilot, lambda: picker.shown == "", what="the first list")
        # Keys as a terminal sends a burst, not waiting for the app between them (as
        # pilot.press does). "a" matches nearly all 30,000 paths: its ranking is still
        # under way when the later, narrower queries are ranked; it must never be shown
        # after them.
        for key in "app_1":
            app.post_message(events.Key(key, key))
        await until(pilot, lambda: picker.shown == "app_1", what="the final ranking")
        await until(pilot, lambda: settled(app), what="every ranking to end")
        await pilot.pause()
        assert picker.shown == "app_1"
        assert listed(picker) == [path for path, _ in rank("app_1", files, SHOWN)]
        await pilot.press("enter")
        assert app.chosen == [rank("app_1", files, 1)[0][0]]


async def test_keys_typed_while_listing_are_ranked_when_the_list_comes(project: Path) -> None:
    gate, done, picker, app = held_listing(project)
    async with app.run_test() as pilot:
        try:
            await pilot.press("a", "p", "p")
            assert picker.files is None and listed(picker) == [None]  # "listing…"
        finally:
            gate.set()
        await until(pilot, lambda: picker.shown == "app", what="the ranking of 'app'")
        assert listed(picker) == [path for path, _ in rank("app", list_files(project))]
        assert listed(picker)[0] == "src/app.py"


async def test_enter_before_the_ranking_takes_its_best_match(project: Path) -> None:
    gate, done, picker, app = held_listing(project)
    async with app.run_test() as pilot:
        try:
            await pilot.press("t", "a", "p", "enter")
            assert app.chosen == []  # nothing is ranked yet: not the "listing…" line
        finally:
            gate.set()
        await until(pilot, lambda: app.chosen, what="the picker to close")
        assert app.chosen == ["tests/test_app.py"]


async def test_enter_before_a_ranking_that_finds_nothing_takes_nothing(project: Path) -> None:
    gate, done, picker, app = held_listing(project)
    async with app.run_test() as pilot:
        try:
            await pilot.press("q", "q", "enter")
        finally:
            gate.set()
        await until(pilot, lambda: picker.shown == "qq", what="the ranking of 'qq'")
        await until(pilot, lambda: settled(app))
        assert app.chosen == [] and app.screen is picker
        assert "no file matches" in str(picker.query_one(OptionList).get_option_at_index(0)
                                        .prompt)
        await pilot.press("escape")
        assert app.chosen == [None]


async def test_keys_after_enter_cancel_the_enter(project: Path) -> None:
    gate, done, picker, app = held_listing(project)
    async with app.run_test() as pilot:
        try:
            await pilot.press("a", "enter", "p")  # enter meant for "a", then typing went on
        finally:
            gate.set()
        await until(pilot, lambda: picker.shown == "ap" and settled(app))
        await pilot.pause()
        assert app.chosen == [] and app.screen is picker


async def test_esc_while_ranking_closes_and_nothing_follows(tmp_path: Path) -> None:
    files = many()
    picker = FilePicker(tmp_path, files)
    app = Host(picker)
    async with app.run_test() as pilot:
        await until(pilot, lambda: picker.shown == "", what="the first list")
        await pilot.press("a", "escape")  # "a" ranks ~30,000 paths: still under way
        assert app.chosen == [None]
        await until(pilot, lambda: settled(app), what="the ranking to stop")
        await pilot.pause()
        assert app.chosen == [None] and not picker.is_attached
    # leaving run_test re-raises anything a worker or handler raised after the close


async def test_closing_while_listing_leaves_nothing_behind(project: Path) -> None:
    gate, done, picker, app = held_listing(project)
    async with app.run_test() as pilot:
        try:
            await pilot.press("a", "escape")
            assert app.chosen == [None]
        finally:
            gate.set()
        await until(pilot, done.is_set, what="the listing to end")
        await until(pilot, lambda: settled(app))
        await pilot.pause()
        assert picker.files is None  # the listing's end found the picker gone


async def test_esc_after_enter_while_ranking_takes_nothing(tmp_path: Path) -> None:
    """Enter waits for the ranking of what is typed; esc then closes the picker. The
    ranking ending after the esc (the screen leaves the stack over a few turns of the
    loop) takes nothing: it took a file and dismissed a second time, popping the chat
    screen (ScreenStackError, the app ended)."""
    files = many(2_000)
    picker = FilePicker(tmp_path, files)
    app = Host(picker)
    async with app.run_test() as pilot:
        await until(pilot, lambda: picker.shown == "", what="the first list")
        assert picker.index is not None
        under_way = picker.generation  # the ranking of what is typed, still on its way
        picker.taking = True  # enter came before it (what on_input_submitted does then)
        picker.action_dismiss_none()  # esc, in the same turn of the loop
        picker._ranking(picker.index, "", under_way)  # and now the ranking ends
        await until(pilot, lambda: settled(app))
        await pilot.pause()
        assert app.chosen == [None] and len(app.screen_stack) == 1
