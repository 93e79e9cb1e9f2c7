"""Tasks of the extension (SEP-2663) in ``tui-agent run``: the ``task`` events, a task's
question answered by the ``--elicit`` policy, and a call stopped by a script's deadline
or by Ctrl-C cancelling its task on the server. The command line's own entry point, the
scripted LLM over HTTP, tests/fakes/ext_task_server.py over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomlkit

from tests.conftest import ROOT, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_tasks import seen
from tests.test_tasks_extension import FAKE
from tests.test_tasks_headless import (  # noqa: F401 (entry: a fixture)
    entry,
    interrupted,
    of,
    run,
)
from tests.zygote import module

pytestmark = pytest.mark.slow


def config(tmp_path: Path, marks: Path, *, code_timeout: float | None = None,
           **server: object) -> Path:
    doc = tomlkit.document()
    if code_timeout is not None:
        doc["code_mode"] = {"timeout": code_timeout}
    command, *argv = module(FAKE, "--marks", str(marks))
    doc["servers"] = {"x": {"command": command, "args": argv, "cwd": str(ROOT),
                            "env": tagged_env(), "startup_timeout": 60, **server}}
    path = tmp_path / "c.toml"
    path.write_text(tomlkit.dumps(doc))
    return path


def test_jsonl_tells_the_task_and_the_elicit_policy_answers_its_question(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--elicit defaults`` answers the task's form as it answers a form asked on the
    open session (the default name), once; the ``task`` events follow the task to its
    end and the result is the task's."""
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("x__greet", {}, id="g1")]), Reply(text="ok"))
    events = run(fake_llm, config(tmp_path, marks), capsys, "--approve", "auto",
                 "--elicit", "defaults")
    tasks = of(events, "task")
    assert {e["id"] for e in tasks} == {"g1"} and len({e["task"] for e in tasks}) == 1
    assert ("input_required", "waiting for a name") in \
        [(e["status"], e["status_message"]) for e in tasks]
    assert tasks[-1]["status"] == "completed"
    result = of(events, "tool_result")[0]
    assert (result["id"], result["is_error"], result["text"]) == ("g1", False, "Hello, Ada!")
    assert [u["keys"] for u in seen(marks, "tasks/update")] == [["name"]]


def test_a_scripts_deadline_cancels_its_task_on_the_server(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("executeToolCode",
                                                 {"code": "result = x.endless()"}, id="s1")]),
                  Reply(text="it timed out"))
    events = run(fake_llm, config(tmp_path, marks, code_timeout=3, auto=["endless"]),
                 capsys, "--approve", "deny", "--code-mode")
    script = next(e for e in of(events, "tool_result") if e["id"] == "s1")
    assert script["is_error"], script
    assert [c["task"] for c in seen(marks, "tasks/cancel")] == \
        [of(events, "task")[0]["task"]]


def test_ctrl_c_stops_the_run_and_cancels_its_task(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) during the call of a task: the server is told to cancel it before
    the run ends."""
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("x__endless", {}, id="e1")]))
    events = interrupted(fake_llm, config(tmp_path, marks), marks)
    task = of(events, "task")[0]["task"]
    assert [c["task"] for c in seen(marks, "tasks/cancel")] == [task]
