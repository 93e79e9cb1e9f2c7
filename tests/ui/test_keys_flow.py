"""Keys on the chat screen: typing never gets lost wherever the focus went (after an
automatic compaction folded most of the conversation), and page up / page down scroll
the transcript from the prompt. Against litellm and the scripted LLM server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from tests.fakes.llm_server import FakeLLM
from tests.test_compaction import Summarizing, words
from tests.ui.kit import SIZE, finish, make_app, ready, send, turn, until, write_config
from tui_agent.ui.app import AgentApp
from tui_agent.ui.widgets.messages import AssistantMessage, CompactedMarker, UserMessage
from tui_agent.ui.widgets.prompt import PromptInput
from tui_agent.ui.widgets.transcript import Transcript

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_typing_after_an_automatic_compaction_reaches_the_prompt(tmp_path: Path) -> None:
    with Summarizing(window=3000, reply=words(600, 0)) as server:
        app = make_app(write_config(tmp_path / "c.toml", base_url=server.base_url,
                                    extra="context_window = 3000\n"))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            n = 0
            while not app.transcript.query(CompactedMarker):  # the window forces one
                n += 1
                assert n < 20, "no automatic compaction"
                await turn(pilot, app, words(1200, n))
            await until(pilot, lambda: app.transcript.folder.folded, what="folded messages")
            prompt = app.chat.query_one("#prompt", PromptInput)
            assert app.focused is prompt

            # alt+up walks up past the folded messages to the transcript itself, then
            # tab comes back down through them
            seen: list[object] = []
            while not isinstance(app.focused, Transcript):
                await pilot.press("alt+up")
                seen.append(app.focused)
                assert len(seen) < 40, "alt+up never reached the transcript"
            assert any(isinstance(w, UserMessage) for w in seen)
            assert any(isinstance(w, AssistantMessage) for w in seen)
            await pilot.press("tab", "tab", "alt+up", "alt+up")
            assert isinstance(app.focused, Transcript)

            before = len(server.requests)
            await pilot.press("h", "i", "space", "t", "h", "e", "r", "e")
            await until(pilot, lambda: prompt.has_focus and prompt.text == "hi there",
                        what="the keys typed in the prompt")
            await pilot.press("enter")
            await until(pilot, lambda: len(server.requests) > before, what="the message sent")
            assert server.requests[-1]["messages"][-1]["content"] == "hi there"
            await until(pilot, lambda: app.turns_ended == n + 1, what="the turn to end")

            # a paste, and enter alone, with a message focused: the prompt takes them
            prompt.load_text("and ")
            prompt.move_cursor(prompt.document.end)
            await pilot.press("alt+up")
            assert isinstance(app.focused, AssistantMessage)
            app.post_message(events.Paste("again"))
            await until(pilot, lambda: prompt.has_focus and prompt.text == "and again",
                        what="the paste in the prompt")
            await pilot.press("alt+up")
            assert isinstance(app.focused, AssistantMessage)
            await pilot.press("enter")
            await until(pilot, lambda: server.requests[-1]["messages"][-1]["content"]
                        == "and again", what="the second message sent")
            assert prompt.has_focus
            await finish(app)


async def test_page_up_and_down_scroll_the_transcript_from_the_prompt(tmp_path: Path) -> None:
    with Summarizing(window=None, reply=words(2500, 0)) as server:
        app = make_app(write_config(tmp_path / "c.toml", base_url=server.base_url))
        async with app.run_test(size=SIZE) as pilot:
            transcript = await long_transcript(pilot, app)
            prompt = app.chat.query_one("#prompt", PromptInput)
            assert prompt.has_focus
            app.post_message(events.Paste("a draft\nof two lines"))  # inserted once, whole
            await until(pilot, lambda: prompt.text == "a draft\nof two lines",
                        what="the paste in the prompt, once")
            bottom = transcript.scroll_y
            await pilot.press("pageup")
            await until(pilot, lambda: transcript.scroll_y < bottom, what="a page up")
            one_up = transcript.scroll_y
            await pilot.press("pageup")
            await until(pilot, lambda: transcript.scroll_y < one_up, what="another page up")
            await pilot.press("pagedown")
            await until(pilot, lambda: abs(transcript.scroll_y - one_up) <= 1,
                        what="a page down")
            await pilot.press("ctrl+home")
            await until(pilot, lambda: transcript.scroll_y == 0, what="the top")
            await pilot.press("ctrl+end")
            await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y,
                        what="the end")
            assert prompt.has_focus and prompt.text == "a draft\nof two lines"
            await send(pilot, app, "/help")
            await until(pilot, lambda: app.screen is not app.chat, what="/help")
            assert "pgup / pgdn" in [str(s.render()) for s in app.screen.query("#help Static")]
            await finish(app)


async def test_a_message_sent_while_scrolled_up_brings_the_view_down(tmp_path: Path) -> None:
    """Scrolled up (a page up, or the focus moved up the messages), a message sent shows
    itself and its reply: the view goes to the bottom and follows the reply again. A page
    down that reaches the bottom follows again too."""
    with Summarizing(window=None, reply=words(2500, 0)) as server:
        app = make_app(write_config(tmp_path / "c.toml", base_url=server.base_url))
        async with app.run_test(size=SIZE) as pilot:
            transcript = await long_transcript(pilot, app)

            def at_bottom() -> bool:
                return transcript.scroll_y >= transcript.max_scroll_y - 1

            for _ in range(2):
                await pilot.press("pageup")
            await until(pilot, lambda: not at_bottom(), what="the view scrolled up")
            await turn(pilot, app, "and one more")
            await until(pilot, at_bottom, what="the view at the reply's end")
            assert isinstance(transcript.query(UserMessage).last(), UserMessage)

            await pilot.press("pageup")
            await until(pilot, lambda: not at_bottom(), what="the view scrolled up")
            while not at_bottom():
                await pilot.press("pagedown")
                await pilot.pause()
            await turn(pilot, app, "the last one")
            await until(pilot, at_bottom, what="the view following the reply")
            await finish(app)


async def long_transcript(pilot: Pilot[Any], app: AgentApp) -> Transcript:
    """The app ready, then three long replies: a transcript taller than two screens,
    scrolled to its end."""
    await ready(pilot, app)
    for n in range(3):
        await turn(pilot, app, f"question {n}")
    transcript = app.transcript
    await until(pilot, lambda: transcript.max_scroll_y > 2 * transcript.size.height
                and transcript.scroll_y == transcript.max_scroll_y,
                what="a transcript taller than two screens, at its end")
    return transcript


async def test_a_message_that_cannot_go_stays_in_the_prompt(fake_llm: FakeLLM,
                                                            tmp_path: Path) -> None:
    """Enter with no model yet, or while a reply is still coming: the app says why, and
    the words stay in the prompt to send later (they were cleared, and lost)."""
    from tests.fakes.llm_server import Reply
    from tui_agent.ui.widgets.messages import Note

    app = make_app(write_config(tmp_path / "none.toml", model=None))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        await send(pilot, app, "my first question")
        await until(pilot, lambda: prompt.text == "my first question", what="the words back")
        assert any("No model yet" in str(n.render()) for n in app.transcript.query(Note))
        assert not app.transcript.query(UserMessage)
        await finish(app)

    fake_llm.push(Reply(text="slow " * 200, chunk_chars=5, delay=0.05))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        await send(pilot, app, "tell me a long story")
        await until(pilot, lambda: app.transcript.query(AssistantMessage), what="the reply")
        await send(pilot, app, "and a second one")
        await until(pilot, lambda: prompt.text == "and a second one", what="the words back")
        assert len(app.transcript.query(UserMessage)) == 1 and len(fake_llm.requests) == 1
        await finish(app)
