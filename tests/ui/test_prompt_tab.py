"""Tab in the prompt completes and never takes the focus away (it used to move the focus
to the transcript silently, and the next backspaces went nowhere); a slash command that
cannot run gives what was typed back to the prompt. The real app with the pilot."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.kit import SIZE, finish, make_app, notes, ready, send, until, write_config
from tui_agent.ui.screens.files import FilePicker
from tui_agent.ui.widgets.messages import AssistantMessage
from tui_agent.ui.widgets.prompt import PromptInput

pytestmark = [pytest.mark.anyio]


async def test_tab_completes_a_command_and_keeps_the_focus(tmp_path: Path) -> None:
    """``/mo`` + tab is ``/model ``; tab after plain words changes nothing and the focus
    stays, so backspace still deletes; where several commands fit, the menu shows them
    and tab takes the highlighted one (the first), or the start they share."""
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        await pilot.press(*"/mo", "tab")
        assert prompt.text == "/model " and app.focused is prompt
        prompt.clear()
        await pilot.press(*"hello", "tab", "tab", "backspace", "backspace")
        assert app.focused is prompt
        assert prompt.text == "hel"
        prompt.clear()
        await pilot.press(*"/c", "tab")  # /compact, /context, /clear, /code, /copy...
        assert prompt.text == "/compact " and app.focused is prompt
        prompt.clear()
        await pilot.press(*"/the")  # /theme, and /think holds no "the"
        await pilot.press("tab")
        assert prompt.text == "/theme "
        prompt.clear()
        await pilot.press(*"/co", "down", "tab")  # /compact, then /context highlighted
        assert prompt.text == "/context "
        await finish(app)


async def test_tab_after_an_at_opens_the_file_picker(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``@REA`` + tab: the file picker, with what was typed after the ``@`` as its query."""
    (tmp_path / "README.md").write_text("hi\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        prompt.load_text("look at @REA")
        prompt.move_cursor(prompt.document.end)
        await pilot.press("tab")
        await until(pilot, lambda: isinstance(app.screen, FilePicker), what="the picker")
        await pilot.press("enter")
        await until(pilot, lambda: prompt.text == "look at @README.md ",
                    what="the path completed")
        assert app.focused is prompt
        await finish(app)


async def test_backspace_with_a_message_focused_edits_the_prompt(tmp_path: Path) -> None:
    """Backspace with the focus on a message (alt+up) deletes in the prompt, as typing
    there goes on in the prompt."""
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await app.transcript.user("a question")
        await pilot.pause()
        prompt = app.chat.query_one("#prompt", PromptInput)
        prompt.load_text("draft")
        prompt.move_cursor(prompt.document.end)
        await pilot.press("alt+up")
        assert not prompt.has_focus
        await pilot.press("backspace")
        await until(pilot, lambda: prompt.text == "draf" and prompt.has_focus,
                    what="the backspace in the prompt")
        await finish(app)


async def test_an_unknown_command_gives_the_message_back(tmp_path: Path) -> None:
    """A mistyped command says what went wrong and leaves the words in the prompt."""
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        await send(pilot, app, "/modle openai/gpt-4o and a long thought")
        await until(pilot, lambda: any("unknown command /modle" in n for n in notes(app)),
                    what="the error")
        assert prompt.text == "/modle openai/gpt-4o and a long thought"
        assert prompt.cursor_location == prompt.document.end
        assert not app.transcript.query(AssistantMessage)
        await finish(app)
