"""Elicitation: a server asks the person for something mid-call. The schema becomes a form
(every kind of field the spec allows, defaults, bounds, formats, titled choices), what is
entered is checked, and the answer goes back; a link is opened only on the person's say-so.
Headless: ``--elicit ask|defaults|decline``, against our asking server and the reference
server-everything; the app's modal is tests/ui/test_elicitation_modal.py's."""

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
from tests.zygote import TUI_AGENT, module
from tui_agent.headless.elicit import TerminalAsker, form_dialogue, url_dialogue
from tui_agent.tools.elicit import (
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
    import time

    # The shell creates the file before echo writes into it: wait for the line, by the
    # clock (the browser is a process of its own, slow to come on a busy machine).
    deadline = time.monotonic() + 30
    while not (opened.exists() and opened.read_text().endswith("\n")):
        assert time.monotonic() < deadline, "the browser was never given the link"
        time.sleep(0.05)
    assert opened.read_text().strip() == "https://pay.example.com/d"


def no_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """No browser to open a link with: ``$BROWSER`` fails and there is no display."""
    from tests.test_login import use_browser

    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    use_browser(monkeypatch, "false")


def test_with_no_browser_a_link_is_not_accepted_until_the_person_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``y`` where no browser opens: the person is told, with the link still above, and
    asked again; the server hears "accept" only on a second ``y``."""
    no_browser(monkeypatch)
    ask = UrlAsk("srv", "Pay the deposit", "https://pay.example.com/d")
    tty = io.StringIO()
    assert url_dialogue(ask, io.StringIO("y\n"), tty).action == "cancel"  # then EOF
    assert "no browser could be opened here: open the link above yourself" in tty.getvalue()
    assert url_dialogue(ask, io.StringIO("y\nn\n"), io.StringIO()).action == "decline"
    assert url_dialogue(ask, io.StringIO("y\ny\n"), io.StringIO()).action == "accept"


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


def everything_config(tmp_path: Path, fake: FakeLLM) -> Path:
    """:func:`asking_config` with server-everything (stdio) as the ``asking`` server."""
    return asking_config(tmp_path, fake,
                         f'command = {json.dumps(everything())}\nargs = ["stdio"]\n')


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
    done = run(everything_config(tmp_path, fake_llm), "--elicit", "defaults", "ask me")
    assert done.returncode == 0, done.stderr
    [text] = results(done.stdout)
    assert "User declined to provide the requested information" in text
