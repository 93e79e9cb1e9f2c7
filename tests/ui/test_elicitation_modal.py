"""Elicitation in the app: the form modal checks what is entered and sends it, a link the
server needs first opens only on consent, keys typed right after an approval land in the
form, ctrl+d declines, and long forms and messages keep their buttons on screen (our
asking server and the reference server-everything, driven with the pilot)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_elicitation import SCHEMA, asking_config, everything_config
from tests.ui.kit import SIZE, make_app, ready, shown, until, with_asking_server
from tui_agent.tools.elicit import Answer, parse_form


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_form_modal_checks_and_sends(tmp_path: Path, fake_llm: FakeLLM) -> None:
    from textual.widgets import Input

    from tui_agent.ui.screens.elicit import ElicitScreen

    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__book", {}, id="b")]),
                  Reply(text="booked"))
    conf = with_asking_server(tmp_path / "c.toml", fake_llm.base_url)
    app = make_app(conf)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"book", "enter")
        screen = await shown(pilot, app, ElicitScreen, "the form")
        guests = screen.query_one("#field-0", Input)
        assert guests.value == "2"  # the default, filled in
        guests.value = "20"
        await pilot.press("ctrl+s")
        assert "at most 12" in str(screen.query_one("#problem-0").render())
        assert app.screen is screen  # nothing sent while a field is wrong
        guests.value = "4"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the result")
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert told[0]["content"] == \
            'accept: {"guests":4,"time":"20:00","terrace":false,"name":"Ada"}'
        assert app.screen is not screen
        await app.shut_down(0)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_link_the_server_needs_first_is_opened_on_consent(
        tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """A call answered with -32042 (links to open first): the consent modal shows the
    server, why and the URL; ``o`` opens it, and the call is tried again, once."""
    from tests.test_login import use_browser
    from tui_agent.ui.screens.elicit import UrlConsent

    opened = tmp_path / "opened"
    use_browser(monkeypatch, f"sh -c 'echo %s >> {opened}'")
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__subscribe", {}, id="s")]),
                  Reply(text="done"))
    conf = with_asking_server(tmp_path / "c.toml", fake_llm.base_url)
    app = make_app(conf)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"go", "enter")
        await shown(pilot, app, UrlConsent, "the consent")
        from textual.widgets import Static

        said = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "asking asks you to open a link" in said
        assert "Confirm the subscription on our site" in said
        assert "https://shop.example.com/confirm?id=9" in said
        assert not opened.exists()  # nothing opens by itself
        await pilot.press("o")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the result")
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert told[0]["content"] == "subscribed"
        await until(pilot, opened.exists, what="the browser")
        assert opened.read_text().strip() == "https://shop.example.com/confirm?id=9"
        await app.shut_down(0)


@pytest.mark.slow
@pytest.mark.anyio
async def test_with_no_browser_the_link_stays_until_the_person_answers(
        tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """``o`` where no browser opens (``$BROWSER`` fails, no display): the server is not
    told "accept"; the link stays on screen with a line saying so, ``c`` puts it on the
    clipboard, and ``enter`` (offered only now) tells the server it is open. (The 2025
    protocol: the asking server's elicitation on 2026-07-28 over stdio fails in the app
    today, "no back-channel for server-initiated requests".)"""
    from textual.widgets import Static

    from tests.test_elicitation import no_browser
    from tui_agent.ui.screens.elicit import UrlConsent

    no_browser(monkeypatch)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__pay", {}, id="p")]),
                  Reply(text="paid"))
    app = make_app(asking_config(tmp_path, fake_llm, protocol="legacy"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"pay", "enter")
        screen = await shown(pilot, app, UrlConsent, "the consent", timeout=60)
        await pilot.press("enter")  # not offered yet: a stray enter accepts nothing
        await pilot.press("o")
        await until(pilot, lambda: bool(screen.query("#said.-shown")), what="no browser said")
        assert app.screen is screen and len(fake_llm.requests) == 1
        said = " ".join(str(w.render()) for w in screen.query(Static))
        assert "No browser could be opened here" in said
        assert "https://pay.example.com/deposit?id=7" in said
        await pilot.press("c")
        assert app.clipboard == "https://pay.example.com/deposit?id=7"
        await pilot.press("enter")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the result")
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert told[0]["content"] == "accept"
        await app.shut_down(0)


@pytest.mark.slow
@pytest.mark.anyio
async def test_what_is_typed_right_after_an_approval_lands_in_the_first_field(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """``y`` on the approval of ``book``, whose server then asks for a form: the keys typed
    as soon as the form is up go into its first field (they used to go to the scrolling
    body, which dropped them), and enter there sends it."""
    from textual.widgets import Input

    from tui_agent.ui.screens.approval import ApprovalScreen
    from tui_agent.ui.screens.elicit import ElicitScreen

    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__book", {}, id="b")]),
                  Reply(text="booked"))
    conf = with_asking_server(tmp_path / "c.toml", fake_llm.base_url, auto=False)
    app = make_app(conf)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"book", "enter")
        await shown(pilot, app, ApprovalScreen, "the approval")
        await pilot.press("y")
        await shown(pilot, app, ElicitScreen, "the form")
        await pilot.press("backspace", "5")  # at once: nothing waits for the focus
        guests = app.screen.query_one("#field-0", Input)
        assert app.focused is guests and guests.value == "5"
        await pilot.press("enter")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the result")
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert told[0]["content"] == \
            'accept: {"guests":5,"time":"20:00","terrace":false,"name":"Ada"}'
        await app.shut_down(0)


@pytest.mark.anyio
async def test_ctrl_d_declines_with_a_text_field_focused(tmp_path: Path,
                                                         fake_llm: FakeLLM) -> None:
    """The form opens with its first field focused, a text field whose own ``ctrl+d``
    deletes a character: the legend's ``ctrl+d decline`` still declines."""
    from textual.widgets import Input

    from tui_agent.ui.screens.elicit import ElicitScreen

    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__book", {}, id="b")]),
                  Reply(text="not booked"))
    app = make_app(with_asking_server(tmp_path / "c.toml", fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"book", "enter")
        await until(pilot, lambda: isinstance(app.screen, ElicitScreen)
                    and isinstance(app.focused, Input), what="the form, its field focused")
        await pilot.press("home", "ctrl+d")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the result")
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert told[0]["content"].startswith("decline"), told
        await app.shut_down(0)


@contextlib.asynccontextmanager
async def everything_form(tmp_path: Path, fake_llm: FakeLLM, size: tuple[int, int],
                          typed: str) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The app at ``size`` with server-everything as ``asking``, ``typed`` sent (the
    scripted model's tool call then asks), and its elicitation form once it is shown:
    (pilot, app, screen)."""
    from tui_agent.ui.screens.elicit import ElicitScreen

    app = make_app(everything_config(tmp_path, fake_llm))
    async with app.run_test(size=size) as pilot:
        await ready(pilot, app)
        await pilot.press(*typed, "enter")
        yield pilot, app, await shown(pilot, app, ElicitScreen, "the form", timeout=60)


@pytest.mark.slow
@pytest.mark.anyio
async def test_server_everythings_long_form_is_sent_with_its_button_at_80x24(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """server-everything's twelve-field form on a small terminal: the Send button stays on
    the screen while the fields scroll; the last field, reached with tab, scrolls into
    sight; a click on Send answers the server."""
    from textual.widgets import Button


    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__trigger-elicitation-request", {},
                                                 id="e")]), Reply(text="ok"))
    async with everything_form(tmp_path, fake_llm, (80, 24), "ask me") as (pilot, app,
                                                                          screen):
        await pilot.press(*"Ada")
        body, send = screen.query_one("#body"), screen.query_one("#do-send", Button)
        screen_area = app.screen.region
        assert body.virtual_size.height > body.size.height  # taller than it: it scrolls
        for _ in range(len(screen.form.fields) - 1):
            await pilot.press("tab")
        last = screen.query_one(f"#field-{len(screen.form.fields) - 1}")
        await until(pilot, lambda: app.focused is last, what="the last field")
        await until(pilot, lambda: body.region.contains_region(last.region),
                    what="the last field in sight")
        assert screen_area.contains_region(send.region) and send.region.bottom <= 24
        await pilot.click("#do-send")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the result")
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert "User provided the requested information" in told[0]["content"]
        assert "- Name: Ada" in told[0]["content"]
        await app.shut_down(0)


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_research_querys_choice_never_covers_the_buttons_at_120x40(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """server-everything's research query on an ambiguous topic asks which one is meant
    (a single choice): the choices are picked in the form, and what is drawn where the
    Send button is stays the button (a dropdown used to open over it, past the dialog)."""
    from textual.widgets import Button


    fake_llm.push(Reply(tool_calls=[FakeToolCall(
        "asking__simulate-research-query", {"topic": "python", "ambiguous": True},
        id="r")]), Reply(text="researched"))
    async with everything_form(tmp_path, fake_llm, (120, 40), "research") as (pilot, app,
                                                                             screen):
        actions = screen.query_one("#actions")
        send = screen.query_one("#do-send", Button)

        def buttons_drawn() -> bool:
            """What is drawn along the row of buttons is the row (none covers it)."""
            row = actions.region
            return all(screen.get_widget_at(x, row.y)[0] in (actions, *actions.children)
                       for x in range(row.x, row.right))

        await until(pilot, lambda: app.focused is screen.query_one("#field-0"),
                    what="the choice focused")
        await pilot.press("enter")  # on the choice: it opens (a dropdown) or picks
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.5)
        assert buttons_drawn()
        await pilot.press("down", "space")
        assert screen.values()[0] == {"interpretation": "snake"}
        assert buttons_drawn() and screen.region.contains_region(send.region)
        await pilot.click("#do-send")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, timeout=60, what="the result")
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert "Clarification**: snake" in told[0]["content"]
        await app.shut_down(0)


@pytest.mark.anyio
async def test_a_long_message_leaves_room_for_the_fields_and_the_buttons(
        tmp_path: Path) -> None:
    """A server's message of 2,000 characters at 80x24: it scrolls in the form's head
    (a third of the screen at most); the first field and the buttons stay in sight. (The
    schema's choices without a default open blank: they used to crash the app.)"""
    from textual.widgets import RadioSet

    from tests.ui.kit import write_config
    from tui_agent.ui.screens.elicit import ElicitScreen

    form = parse_form("srv", "Please read this carefully. " * 80, SCHEMA)
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, app.backend.ready.is_set, what="the backend")
        screen = ElicitScreen(form)
        answers: list[Answer | None] = []
        await app.push_screen(screen, answers.append)
        head, first = screen.query_one("#head"), screen.query_one("#field-0")
        send = screen.query_one("#do-send")
        await until(pilot, lambda: app.focused is first, what="the first field focused")
        assert head.region.height <= 8 < head.virtual_size.height  # it scrolls
        for widget in (first, send):
            assert screen.query_one("#dialog").region.contains_region(widget.region)
        hero = [f.name for f in form.fields].index("hero")
        assert screen.query_one(f"#field-{hero}", RadioSet).pressed_index == 0  # (none)
        assert screen.values()[0]["hero"] is None
        await pilot.click("#do-decline")  # the buttons do what their keys do
        await until(pilot, lambda: answers, what="the answer")
        assert answers == [Answer("decline")]
        await app.shut_down(0)
