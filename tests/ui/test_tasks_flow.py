"""A tool that runs as a task, in the app: its card shows the task's status and the
server's progress on one line, and Esc cancels the task on the server (``tasks/cancel``).
The real app through the pilot, the scripted LLM, tests/fakes/task_server.py over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, TAG_VAR
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_tasks import seen
from tests.ui.kit import (
    SIZE,
    finish,
    make_app,
    ready,
    send,
    shown,
    toml_value,
    until,
    write_config,
)
from tests.zygote import module

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def with_task_server(path: Path, base_url: str, marks: Path) -> Path:
    server = str(ROOT / "tests" / "fakes" / "task_server.py")
    return write_config(path, base_url=base_url, extra=(
        f"\n[servers.t]\ncommand = {toml_value(sys.executable)}\n"
        f"args = {toml_value([server, '--marks', str(marks), '--step', '0.3'])}\n"
        f"env = {{ {TAG_VAR} = {toml_value(os.environ[TAG_VAR])} }}\n"
        'protocol = "legacy"\nauto = ["*"]\nstartup_timeout = 20\n'))


async def test_the_card_shows_the_task_and_escape_cancels_it(fake_llm: FakeLLM,
                                                             tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__research", {"topic": "owls", "steps": 40},
                                                 id="r1")]))
    app = make_app(with_task_server(tmp_path / "c.toml", fake_llm.base_url, marks))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        before = app.turns_ended
        await send(pilot, app, "research owls")
        await until(pilot, lambda: "r1" in app.transcript.cards, what="the card")
        card = app.transcript.cards["r1"]

        def line() -> str:
            shown = card._progress
            return str(shown.render()) if shown is not None else ""

        await until(pilot, lambda: line().startswith("task "), what="the task line")
        await until(pilot, lambda: "%" in line(), what="the progress on it")
        await until(pilot, lambda: bool(seen(marks, "tasks/get")), what="a look at the task")
        task = seen(marks, "tasks/get")[0]["task"]
        assert line().startswith(f"task {task[:8]}… working — "), line()
        assert "step " in line()
        await pilot.press("escape")
        await until(pilot, lambda: app.turns_ended > before, what="the stop")
        await until(pilot, lambda: bool(seen(marks, "tasks/cancel")), what="tasks/cancel")
        assert [c["task"] for c in seen(marks, "tasks/cancel")] == [task]
        assert card.status == "cancelled"
        await finish(app)


def with_extension_server(path: Path, base_url: str, marks: Path) -> Path:
    """tests/fakes/ext_task_server.py (the tasks extension, 2026-07-28) over stdio."""
    command, *argv = module("tests.fakes.ext_task_server", "--marks", str(marks))
    return write_config(path, base_url=base_url, extra=(
        f"\n[servers.x]\ncommand = {toml_value(command)}\nargs = {toml_value(argv)}\n"
        f"cwd = {toml_value(str(ROOT))}\n"
        f"env = {{ {TAG_VAR} = {toml_value(os.environ[TAG_VAR])} }}\n"
        'auto = ["*"]\nstartup_timeout = 60\n'))


async def test_an_extension_tasks_question_is_the_form_modal_once(fake_llm: FakeLLM,
                                                                  tmp_path: Path) -> None:
    """A task of the extension that needs input: the card says so, the question comes as
    the usual form modal, once (the server repeats it on every look until it is
    answered), and the answer sent from the form completes the task."""
    from textual.widgets import Input

    from tui_agent.ui.screens.elicit import ElicitScreen

    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("x__greet", {}, id="g1")]),
                  Reply(text="greeted"))
    app = make_app(with_extension_server(tmp_path / "c.toml", fake_llm.base_url, marks))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "greet me")
        screen = await shown(pilot, app, ElicitScreen, "the form", timeout=60)
        card = app.transcript.cards["g1"]

        def line() -> str:
            progress = card._progress
            return str(progress.render()) if progress is not None else ""

        await until(pilot, lambda: "input_required — waiting for a name" in line(),
                    what="the task line")
        await until(pilot, lambda: sum(1 for g in seen(marks, "tasks/get")
                                       if g["keys"] == ["name"]) >= 3,
                    what="the question shown on three looks", timeout=60)
        assert app.screen is screen  # one modal for the one question
        screen.query_one("#field-0", Input).value = "Luca"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, what="the result", timeout=60)
        told = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert told[0]["content"] == "Hello, Luca!"
        assert not isinstance(app.screen, ElicitScreen)
        assert [u["keys"] for u in seen(marks, "tasks/update")] == [["name"]]
        assert card.status == "done"
        await finish(app)


async def test_escape_cancels_an_extension_task_on_the_server(fake_llm: FakeLLM,
                                                              tmp_path: Path) -> None:
    """Esc stops the turn, and the call's task of the extension is cancelled on the server
    (``tasks/cancel``, declaring the extension as every request does)."""

    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("x__endless", {}, id="e1")]))
    app = make_app(with_extension_server(tmp_path / "c.toml", fake_llm.base_url, marks))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        before = app.turns_ended
        await send(pilot, app, "go on forever")
        await until(pilot, lambda: len(seen(marks, "tasks/get")) >= 2,
                    what="looks at the task", timeout=60)
        await pilot.press("escape")
        await until(pilot, lambda: app.turns_ended > before, what="the stop")
        await until(pilot, lambda: bool(seen(marks, "tasks/cancel")), what="tasks/cancel")
        cancels = seen(marks, "tasks/cancel")
        assert [c["task"] for c in cancels] == [seen(marks, "tasks/get")[0]["task"]]
        assert cancels[0]["declared"]
        assert app.transcript.cards["e1"].status == "cancelled"
        await finish(app)
