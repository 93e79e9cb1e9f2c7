"""Elicitation: a server asks the person for something mid-call. The schema becomes a form
(every kind of field the spec allows, defaults, bounds, formats, titled choices), what is
entered is checked, and the answer goes back; a link is opened only on the person's say-so.
Headless: ``--elicit ask|defaults|decline``, against our asking server and the reference
server-everything; the TUI's modal is driven with the pilot."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import everything
from tests.ui.kit import SIZE, make_app, ready, until, with_asking_server
from tests.zygote import TUI_AGENT, module
from tui_agent.headless.elicit import TerminalAsker, form_dialogue, url_dialogue
from tui_agent.tools.elicit import (
    Answer,
    Form,
    FormError,
    UrlAsk,
    Value,
    defaults,
    parse_form,
    problems,
    read,
    safe_url,
)

SCHEMA: dict[str, Any] = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "title": "Name\x1b[31m", "minLength": 2, "maxLength": 5},
    "email": {"type": "string", "format": "email"},
    "site": {"type": "string", "format": "uri"},
    "born": {"type": "string", "format": "date"},
    "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
    "ratio": {"type": "number", "minimum": 0, "maximum": 1},
    "ok": {"type": "boolean", "default": True},
    "friend": {"type": "string", "enum": ["m", "r"], "default": "r"},
    "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"},
                                          {"const": "h2", "title": "Wonder Woman"}]},
    "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
    "tools": {"type": "array", "minItems": 1, "maxItems": 2,
              "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["a"]},
    "fish": {"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}]}},
}}


def test_every_kind_of_field_is_read_from_the_schema() -> None:
    form = parse_form("srv", "Fill\x07 this in", SCHEMA)
    assert form.message == "Fill this in"  # the server's text is cleaned
    kinds = {f.name: f.kind for f in form.fields}
    assert kinds == {"name": "string", "email": "string", "site": "string", "born": "string",
                     "count": "integer", "ratio": "number", "ok": "boolean", "friend": "choice",
                     "hero": "choice", "pet": "choice", "tools": "choices", "fish": "choices"}
    by = {f.name: f for f in form.fields}
    assert by["name"].title == "Name" and by["name"].required
    assert by["hero"].options == (("h1", "Superman"), ("h2", "Wonder Woman"))
    assert by["pet"].options == (("p1", "Cats"), ("p2", "Dogs"))
    assert by["fish"].options == (("f1", "Tuna"),)
    assert defaults(form) == {"count": 3, "ok": True, "friend": "r", "tools": ["a"]}
    assert problems(form, defaults(form)) == {"name": "required"}


def test_what_is_entered_is_checked() -> None:
    form = parse_form("srv", "", SCHEMA)
    good: dict[str, Value] = {
        "name": "Ada", "email": "ada@example.com", "site": "https://ada.dev",
        "born": "1815-12-10", "count": 10, "ratio": 0.5, "tools": ["a", "b"]}
    assert problems(form, good) == {}
    bad: dict[str, Value] = {
        "name": "A", "email": "ada", "site": "ada.dev", "born": "10/12/1815", "count": 11,
        "ratio": 2, "friend": "x", "tools": ["a", "b", "c"], "fish": ["f9"]}
    assert problems(form, bad) == {
        "name": "at least 2 characters", "email": "an email address, please",
        "site": "a full URL, please (https://...)", "born": "a date, please (YYYY-MM-DD)",
        "count": "at most 10", "ratio": "at most 1", "friend": "one of the choices, please",
        "tools": "at most 2 choices", "fish": "only the choices listed, please"}
    count = next(f for f in form.fields if f.name == "count")
    assert read(count, " 7 ") == 7 and read(count, "") is None
    with pytest.raises(ValueError, match="a whole number"):
        read(count, "7.5")


def test_what_cannot_be_a_form_or_a_link_is_refused_by_name() -> None:
    with pytest.raises(FormError, match="field 'address' has a type this client cannot show"):
        parse_form("srv", "", {"type": "object", "properties": {"address": {"type": "object"}}})
    with pytest.raises(FormError, match="must list its choices"):
        parse_form("srv", "", {"properties": {"tags": {"type": "array"}}})
    assert safe_url("https://pay.example.com/x?id=1") == "https://pay.example.com/x?id=1"
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "https://user:pw@evil.com/",
                "https://ok.com/\x1b]8;;x\x07", "https:///nohost"):
        assert safe_url(bad) is None, bad


def test_on_a_terminal_each_field_is_asked_with_its_default() -> None:
    form = parse_form("srv", "Book it", {"type": "object", "required": ["who"], "properties": {
        "who": {"type": "string", "minLength": 2},
        "guests": {"type": "integer", "maximum": 12, "default": 2},
        "time": {"type": "string", "enum": ["19", "20"], "default": "20"},
        "outside": {"type": "boolean"}}})
    tty = io.StringIO()
    # "A" is too short and asked again; 20 guests are too many; the defaults stand for time.
    answer = form_dialogue(form, io.StringIO("A\nAda\n20\n4\n\nyes\n\n"), tty)
    assert answer.action == "accept"
    assert answer.content == {"who": "Ada", "guests": 4, "time": "20", "outside": True}
    shown = tty.getvalue()
    assert "? srv asks: Book it" in shown and "guests [2]:" in shown.lower()
    assert "at least 2 characters" in shown and "at most 12" in shown
    assert "1. 19" in shown and "choice [2]:" in shown
    assert form_dialogue(form, io.StringIO("Ada\n\n\n\nn\n"), io.StringIO()).action == "decline"
    assert form_dialogue(form, io.StringIO("Ada\n"), io.StringIO()).action == "cancel"  # EOF


def test_a_link_opens_only_on_yes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_login import use_browser

    opened = tmp_path / "opened"
    use_browser(monkeypatch, f"sh -c 'echo %s >> {opened}'")
    ask = UrlAsk("srv", "Pay the deposit", "https://pay.example.com/d")
    tty = io.StringIO()
    assert url_dialogue(ask, io.StringIO("n\n"), tty).action == "decline"
    assert "https://pay.example.com/d" in tty.getvalue() and not opened.exists()
    assert url_dialogue(ask, io.StringIO(""), io.StringIO()).action == "cancel"
    assert url_dialogue(ask, io.StringIO("y\n"), io.StringIO()).action == "accept"
    for _ in range(100):
        if opened.exists():
            break
        import time
        time.sleep(0.05)
    assert opened.read_text().strip() == "https://pay.example.com/d"


@pytest.mark.anyio
async def test_the_policies_of_a_headless_run() -> None:
    err = io.StringIO()
    form = Form("srv", "Book it", parse_form("srv", "", SCHEMA).fields)
    assert (await TerminalAsker("decline", err)(form)).action == "decline"
    assert (await TerminalAsker("defaults", err)(form)).action == "decline"  # name has none
    full = parse_form("srv", "Prefs", {"properties": {"n": {"type": "integer", "default": 1}}})
    answer = await TerminalAsker("defaults", err)(full)
    assert (answer.action, answer.content) == ("accept", {"n": 1})
    link = UrlAsk("srv", "Pay", "https://pay.example.com/d")
    assert (await TerminalAsker("defaults", err)(link)).action == "decline"  # never opened
    nobody = TerminalAsker("ask", err, tty_path=str(Path("/nonexistent/tty")))
    assert (await nobody(form)).action == "decline"
    assert "tui-agent: srv asked for input (Book it): declined" in err.getvalue()
    assert "srv asked for a link to open (Pay): declined" in err.getvalue()


def asking_config(tmp_path: Path, fake: FakeLLM, server: str = "",
                  protocol: str = "auto") -> Path:
    path = tmp_path / "config.toml"
    exe, *argv = module("tests.fakes.asking_server")
    command = server or (f'command = {json.dumps(exe)}\nargs = {json.dumps(argv)}\n'
                         f'cwd = {json.dumps(str(ROOT))}\n')
    path.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake.base_url}"\n'
                    f'api_key = "sk-test"\n\n[servers.asking]\n{command}auto = ["*"]\n'
                    f'startup_timeout = 30\nprotocol = "{protocol}"\n', encoding="utf-8")
    return path


def run(conf: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tui-agent run`` with no controlling terminal (a new session), as in CI."""
    return subprocess.run([*TUI_AGENT, "run", "--config", str(conf),
                           "--output", "jsonl", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, stdin=subprocess.DEVNULL,
                          start_new_session=True,
                          env={**os.environ, **tagged_env(), "PYTHONPATH": str(ROOT)})


def results(out: str) -> list[str]:
    return [e["text"] for e in map(json.loads, out.splitlines()) if e["type"] == "tool_result"]


@pytest.mark.slow
def test_a_headless_run_answers_with_the_defaults_or_declines(tmp_path: Path,
                                                               fake_llm: FakeLLM) -> None:
    """``book`` asks through the 2026-07-28 protocol's input_required results, ``pay`` (a
    link) mid-call in the 2025-11-25 protocol: both reach the same policy."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__book", {}, id="b")]),
                  Reply(text="booked"))
    done = run(asking_config(tmp_path, fake_llm), "--elicit", "defaults", "book a table")
    assert done.returncode == 0, done.stderr
    assert results(done.stdout) == [
        'accept: {"guests":2,"time":"20:00","terrace":false,"name":"Ada"}']
    assert "asking asked for input (Book a table: how many, and when?): accepted" in done.stderr
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__pay", {}, id="p")]),
                  Reply(text="paid?"))
    legacy = asking_config(tmp_path, fake_llm, protocol="legacy")
    done = run(legacy, "--elicit", "defaults", "pay")
    assert results(done.stdout) == ["decline"], done.stderr  # a link is never opened by itself
    assert "asking asked for a link to open (Pay the deposit on the restaurant's page): " \
        "declined" in done.stderr
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__book", {}, id="b")]),
                  Reply(text="no"))
    done = run(asking_config(tmp_path, fake_llm), "book a table")  # --elicit ask, no terminal
    assert results(done.stdout) == ["decline: "], done.stderr


@pytest.mark.slow
def test_server_everything_sees_the_capability_and_gets_an_answer(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """server-everything registers its elicitation tools only for a client that declares
    elicitation; its form has a required name without a default, so ``defaults`` declines."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__trigger-elicitation-request", {},
                                                 id="e")]), Reply(text="ok"))
    server = f'command = {json.dumps(everything())}\nargs = ["stdio"]\n'
    done = run(asking_config(tmp_path, fake_llm, server), "--elicit", "defaults", "ask me")
    assert done.returncode == 0, done.stderr
    [text] = results(done.stdout)
    assert "User declined to provide the requested information" in text


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
        await app.backend.hub.wait_all()  # type: ignore[union-attr]
        await pilot.press(*"book", "enter")
        await until(pilot, lambda: isinstance(app.screen, ElicitScreen)
                    and app.screen.is_mounted, what="the form")
        screen = app.screen
        assert isinstance(screen, ElicitScreen)
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
        await app.backend.hub.wait_all()  # type: ignore[union-attr]
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: isinstance(app.screen, UrlConsent), what="the consent")
        from textual.widgets import Static

        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "asking asks you to open a link" in shown
        assert "Confirm the subscription on our site" in shown
        assert "https://shop.example.com/confirm?id=9" in shown
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
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval")
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ElicitScreen)
                    and app.screen.is_mounted, what="the form")
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


@pytest.mark.slow
@pytest.mark.anyio
async def test_server_everythings_long_form_is_sent_with_its_button_at_80x24(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """server-everything's twelve-field form on a small terminal: the Send button stays on
    the screen while the fields scroll; the last field, reached with tab, scrolls into
    sight; a click on Send answers the server."""
    from textual.widgets import Button

    from tui_agent.ui.screens.elicit import ElicitScreen

    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__trigger-elicitation-request", {},
                                                 id="e")]), Reply(text="ok"))
    server = f'command = {json.dumps(everything())}\nargs = ["stdio"]\n'
    app = make_app(asking_config(tmp_path, fake_llm, server))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press(*"ask me", "enter")
        await until(pilot, lambda: isinstance(app.screen, ElicitScreen)
                    and app.screen.is_mounted, what="the form")
        screen = app.screen
        assert isinstance(screen, ElicitScreen)
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


@pytest.mark.anyio
async def test_a_long_message_leaves_room_for_the_fields_and_the_buttons(
        tmp_path: Path) -> None:
    """A server's message of 2,000 characters at 80x24: it scrolls in the form's head
    (a third of the screen at most); the first field and the buttons stay in sight. (The
    schema's choices without a default open blank: they used to crash the app.)"""
    from textual.widgets import Select

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
        assert screen.query_one(f"#field-{hero}", Select).is_blank()
        await pilot.click("#do-decline")  # the buttons do what their keys do
        await until(pilot, lambda: answers, what="the answer")
        assert answers == [Answer("decline")]
        await app.shut_down(0)
