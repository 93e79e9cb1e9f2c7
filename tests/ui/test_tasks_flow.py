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
from tests.ui.kit import SIZE, finish, make_app, ready, send, toml_value, until, write_config

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
