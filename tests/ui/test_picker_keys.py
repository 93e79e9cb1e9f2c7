"""The arrows in a picker (issue 46): down and up in the filter move the highlight at once,
as in every fuzzy picker, while the keys keep going to the filter; enter then takes the
highlighted row even where the typed text could be taken (``free_text``). The real
Picker and FilePicker in a real app, driven by the pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, OptionList

from tests.ui.kit import until
from tui_agent.ui.screens.files import FilePicker
from tui_agent.ui.screens.picker import Picker

pytestmark = pytest.mark.anyio

CHOICES = [("openai/gpt-4o", "openai/gpt-4o"), ("openai/gpt-4o-mini", "openai/gpt-4o-mini"),
           ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5")]


class Host(App[None]):
    """An app that opens the picker at once and keeps what it was dismissed with."""

    def __init__(self, picker: Picker) -> None:
        super().__init__()
        self.picker = picker
        self.chosen: list[str | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.picker, self.chosen.append)


def highlighted(picker: Picker) -> str | None:
    option = picker.query_one(OptionList).highlighted_option
    return None if option is None else option.id


async def test_the_first_down_moves_the_highlight_and_typing_goes_on() -> None:
    picker = Picker("Model", CHOICES, free_text=True)
    app = Host(picker)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: picker.is_mounted, what="the picker")
        assert highlighted(picker) == "openai/gpt-4o"
        await pilot.press("down")
        assert highlighted(picker) == "openai/gpt-4o-mini"  # the first press, not the second
        assert isinstance(app.focused, Input)  # the keys still go to the filter
        await pilot.press("down", "up")
        assert highlighted(picker) == "openai/gpt-4o-mini"
        await pilot.press("up")
        assert highlighted(picker) == "openai/gpt-4o"
        await pilot.press(*"gpt")  # typing filters again, from the first match
        assert picker.query_one(Input).value == "gpt"
        assert highlighted(picker) == "openai/gpt-4o"
        await pilot.press("down", "enter")  # the row the arrows chose, not the typed "gpt"
        await until(pilot, lambda: app.chosen == ["openai/gpt-4o-mini"], what="the choice")


async def test_typed_text_is_taken_when_the_arrows_did_not_move() -> None:
    picker = Picker("Model", CHOICES, free_text=True)
    app = Host(picker)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: picker.is_mounted, what="the picker")
        await pilot.press("down", *"gpt-5", "enter")  # typing after the arrows: the text
        await until(pilot, lambda: app.chosen == ["gpt-5"], what="the typed text")


async def test_the_file_picker_moves_on_the_first_down(tmp_path: Path) -> None:
    files = ["README.md", "src/app.py", "src/chat.py"]
    picker = FilePicker(tmp_path, files)
    app = Host(picker)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: highlighted(picker) == "README.md", what="the files")
        await pilot.press("down")
        assert highlighted(picker) == "src/app.py"
        await pilot.press("enter")
        await until(pilot, lambda: app.chosen == ["src/app.py"], what="the file")
