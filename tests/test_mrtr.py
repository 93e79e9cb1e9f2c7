"""Multi-round-trip requests (SEP-2322): in the 2026-07-28 protocol a server asks the
client for something by answering a call with ``input_required`` and the requests it
embeds, and the client calls again with the answers. Those embedded requests must reach
the same person-facing paths as a request made on the open session (2025-11-25): the
``--elicit`` and ``--sampling`` policies and the project's roots headless, the form and
sampling modals in the app. Against tests/fakes/mrtr_server.py, pinned to 2026-07-28 (no
other way for a request to reach the client there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_elicitation import results, run
from tests.zygote import module

pytestmark = pytest.mark.slow

BOOKED = '{"guests":2,"time":"20:00","terrace":false,"name":"Ada"}'


def mrtr_config(tmp_path: Path, fake: FakeLLM) -> Path:
    """A config whose one server is the fake above, in the 2026-07-28 protocol only."""
    path = tmp_path / "config.toml"
    command, *argv = module("tests.fakes.mrtr_server")
    path.write_text(
        f'[model]\nname = "openai/fake-model"\napi_base = "{fake.base_url}"\n'
        f'api_key = "sk-test"\n\n[servers.mrtr]\ncommand = {json.dumps(command)}\n'
        f'args = {json.dumps(argv)}\ncwd = {json.dumps(str(ROOT))}\n'
        'auto = ["*"]\nstartup_timeout = 30\nprotocol = "2026-07-28"\n', encoding="utf-8")
    return path


def test_a_headless_run_answers_embedded_requests_by_its_flags(tmp_path: Path,
                                                               fake_llm: FakeLLM) -> None:
    """One run, three embedded requests: the form gets its defaults (``--elicit
    defaults``), the model answers the server (``--sampling allow``), the roots are the
    project's; each said on stderr as a standalone request is."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("mrtr__book", {}, id="b")]),
                  Reply(tool_calls=[FakeToolCall("mrtr__haiku", {}, id="h")]),
                  Reply(text="Light on the oak grain"),  # the server's request, answered
                  Reply(tool_calls=[FakeToolCall("mrtr__roots", {}, id="r")]),
                  Reply(text="done"))
    done = run(mrtr_config(tmp_path, fake_llm), "--elicit", "defaults", "--sampling", "allow",
               "book, write, look")
    assert done.returncode == 0, done.stderr
    assert results(done.stdout) == [f"accept: {BOOKED}",
                                    "openai/fake-model wrote: Light on the oak grain",
                                    ROOT.as_uri()]
    assert "mrtr asked for input (Book a table: how many, and when?): accepted" in done.stderr
    assert "mrtr asked the model (1 message, up to 60 tokens)" in done.stderr


def test_headless_without_the_flags_embedded_requests_are_declined(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """No ``--elicit``/``--sampling`` and no terminal: the form is declined, the model is
    not lent to the server (the turn's model saw only the turn's requests)."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("mrtr__book", {}, id="b"),
                                    FakeToolCall("mrtr__haiku", {}, id="h")]),
                  Reply(text="nothing then"))
    done = run(mrtr_config(tmp_path, fake_llm), "book and write")
    assert done.returncode == 0, done.stderr
    told = {e["id"]: e["text"] for e in map(json.loads, done.stdout.splitlines())
            if e["type"] == "tool_result"}
    assert told["b"] == "decline: " and "declined the request" in told["h"], done.stdout
    assert len(fake_llm.requests) == 2


@pytest.mark.anyio
async def test_the_app_asks_embedded_requests_in_its_modals(tmp_path: Path,
                                                            fake_llm: FakeLLM) -> None:
    """The form modal for the embedded form (its default sent on ctrl+s), the sampling
    modals for the embedded request for the model (``y`` sends the reply), the project's
    roots for the embedded ``roots/list``: each answer reaches the server's second round,
    and so the tool's result."""
    from tests.ui.kit import SIZE, make_app, ready, shown, until, write_config
    from tui_agent.ui.screens.elicit import ElicitScreen
    from tui_agent.ui.screens.sampling import SampledReply, SamplingScreen

    fake_llm.push(Reply(tool_calls=[FakeToolCall("mrtr__book", {}, id="b")]),
                  Reply(text="booked"),
                  Reply(tool_calls=[FakeToolCall("mrtr__haiku", {}, id="h")]),
                  Reply(text="Rain on the window"), Reply(text="written"),
                  Reply(tool_calls=[FakeToolCall("mrtr__roots", {}, id="r")]),
                  Reply(text="looked"))
    server = mrtr_config(tmp_path, fake_llm).read_text().split("\n\n", 1)[1]
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                                extra="\n" + server))

    def told(request: int) -> str:
        return str([m for m in fake_llm.requests[request]["messages"]
                    if m["role"] == "tool"][-1]["content"])

    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"book", "enter")
        await shown(pilot, app, ElicitScreen, "the form")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the booking")
        assert told(1) == f"accept: {BOOKED}"
        await until(pilot, lambda: not app.turn_running(), what="the turn's end")
        await pilot.press(*"haiku", "enter")
        await shown(pilot, app, SamplingScreen, "the request")
        await pilot.press("ctrl+s")
        await shown(pilot, app, SampledReply, "the reply")
        await pilot.press("y")
        await until(pilot, lambda: len(fake_llm.requests) >= 5, what="the haiku")
        assert told(4) == "openai/fake-model wrote: Rain on the window"
        await until(pilot, lambda: not app.turn_running(), what="the turn's end")
        await pilot.press(*"roots", "enter")
        await until(pilot, lambda: len(fake_llm.requests) >= 7, what="the roots")
        assert told(6) == Path.cwd().as_uri()
        await app.shut_down(0)
