"""Tools that run as tasks in ``tui-agent run``: the ``task`` events of ``--output jsonl``
(and the text output's task line), ``--approve`` applied as to any call, and a code-mode
script's call of a task tool, which waits for the result and whose end cancels the task.
Real servers over stdio (tests/fakes/task_server.py, server-everything), the scripted
LLM over HTTP, the command line's own entry point."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from tests.conftest import ROOT, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_tasks import seen
from tui_agent.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def entry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import io
    import signal

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    yield
    signal.signal(signal.SIGTERM, before)


def config(tmp_path: Path, marks: Path, *, code_timeout: float | None = None,
           **server: object) -> Path:
    doc = tomlkit.document()
    if code_timeout is not None:
        doc["code_mode"] = {"timeout": code_timeout}
    doc["servers"] = {"t": {"command": sys.executable,
                            "args": [str(ROOT / "tests" / "fakes" / "task_server.py"),
                                     "--marks", str(marks)],
                            "env": tagged_env(), "protocol": "legacy", **server}}
    path = tmp_path / "c.toml"
    path.write_text(tomlkit.dumps(doc))
    return path


def run(fake: FakeLLM, conf: Path, capsys: pytest.CaptureFixture[str], *flags: str
        ) -> list[dict[str, Any]]:
    assert main(["run", "--config", str(conf), "--model", "openai/fake-model", "--api-base",
                 fake.base_url, "--output", "jsonl", *flags, "go"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_jsonl_shows_the_tasks_status_then_its_result(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__research", {"topic": "owls", "steps": 2},
                                                 id="r1")]), Reply(text="done"))
    events = run(fake_llm, config(tmp_path, marks), capsys, "--approve", "auto")
    tasks = of(events, "task")
    assert {e["id"] for e in tasks} == {"r1"}
    assert len({e["task"] for e in tasks}) == 1
    assert [(e["status"], e["status_message"]) for e in tasks][-2:] == \
        [("working", "step 2 of 2"), ("completed", None)]
    assert tasks[0]["status"] == "working"
    result = of(events, "tool_result")[0]
    assert (result["id"], result["is_error"], result["text"]) == \
        ("r1", False, "researched owls in 2 steps")
    order = [e["type"] for e in events if e["type"] in ("task", "tool_result")]
    assert order[-1] == "tool_result"
    assert [(m["tool"], m["task"]) for m in seen(marks, "tools/call")] == [("research", True)]


def test_text_output_shows_the_task_line(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__doomed", {}, id="d1")]),
                  Reply(text="it failed"))
    assert main(["run", "--config", str(config(tmp_path, tmp_path / "marks")), "--model",
                 "openai/fake-model", "--api-base", fake_llm.base_url, "--approve", "auto",
                 "go"]) == 0
    err = capsys.readouterr().err
    assert "… task " in err and " failed: the index is gone" in err, err
    assert "  ✗ the index is gone" in err


def test_approve_deny_refuses_a_task_tool_like_any_tool(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__research", {"topic": "owls"}, id="r1")]),
                  Reply(text="refused"))
    events = run(fake_llm, config(tmp_path, marks), capsys, "--approve", "deny")
    assert [e["decision"] for e in of(events, "approval")] == ["denied"]
    assert of(events, "tool_result")[0]["is_error"]
    assert not of(events, "task") and not seen(marks)


def test_a_script_calls_a_task_tool_and_gets_its_result(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Inside code mode the call waits for the task's result; its status comes as
    ``task`` events of the script's call (``s1.1``)."""
    marks = tmp_path / "marks"
    code = 'result = t.research(topic="owls", steps=2) + "!"'
    fake_llm.push(Reply(tool_calls=[FakeToolCall("executeToolCode", {"code": code}, id="s1")]),
                  Reply(text="done"))
    events = run(fake_llm, config(tmp_path, marks, auto=["research"]), capsys,
                 "--approve", "deny", "--code-mode")
    tasks = of(events, "task")
    assert {e["id"] for e in tasks} == {"s1.1"} and tasks[-1]["status"] == "completed"
    script = next(e for e in of(events, "tool_result") if e["id"] == "s1")
    assert not script["is_error"] and "researched owls in 2 steps!" in script["text"]


def test_a_scripts_deadline_cancels_its_task_on_the_server(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("executeToolCode",
                                                 {"code": "result = t.endless()"}, id="s1")]),
                  Reply(text="it timed out"))
    events = run(fake_llm, config(tmp_path, marks, code_timeout=1.5, auto=["endless"]),
                 capsys, "--approve", "deny", "--code-mode")
    script = next(e for e in of(events, "tool_result") if e["id"] == "s1")
    assert script["is_error"], script
    assert [c["task"] for c in seen(marks, "tasks/cancel")] == \
        [of(events, "task")[0]["task"]]


def test_server_everythings_research_query_through_run(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.reference import everything

    doc = tomlkit.document()
    doc["servers"] = {"every": {"command": everything(), "args": ["stdio"],
                                "env": tagged_env(), "startup_timeout": 30}}
    conf = tmp_path / "e.toml"
    conf.write_text(tomlkit.dumps(doc))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("every__simulate-research-query",
                                                 {"topic": "owls"}, id="q1")]),
                  Reply(text="done"))
    events = run(fake_llm, conf, capsys, "--approve", "auto")
    # The server moves through four stages a second apart and asks to be polled every
    # second (its notifications/tasks/status the SDK drops for 2025-11-25, and the spec
    # says not to rely on them), so which stages a poll lands in is timing: the test asks
    # for the server's own words, in its order, each told once, and at least one of them.
    stages = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...",
              "Generating report..."]
    said = [e["status_message"] for e in of(events, "task") if e["status"] == "working"]
    told = [m for m in said if m is not None]
    assert told and set(told) <= set(stages), said
    assert told == sorted(set(told), key=stages.index), said
    assert of(events, "task")[-1]["status"] == "completed", \
        [e for e in events if e["type"] not in ("text", "context")]
    result = of(events, "tool_result")[0]
    assert not result["is_error"] and "# Research Report: owls" in result["text"]


def test_ctrl_c_stops_the_run_and_cancels_its_task(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) during a task's call: the turn stops, and the server is told to
    cancel the task before the run ends."""
    marks = tmp_path / "marks"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__endless", {}, id="e1")]))
    events = interrupted(fake_llm, config(tmp_path, marks), marks)
    task = of(events, "task")[0]["task"]
    assert [c["task"] for c in seen(marks, "tasks/cancel")] == [task]


def interrupted(fake_llm: FakeLLM, config_path: Path, marks: Path) -> list[dict[str, Any]]:
    """``tui-agent run --output jsonl`` with ``config_path``, sent Ctrl-C (SIGINT) once the
    server of ``marks`` was asked about a task; the events it printed (and no traceback).
    Both forms of tasks stop so."""
    import os
    import signal
    import subprocess
    import time

    child = subprocess.Popen(
        [sys.executable, "-m", "tui_agent", "run", "--config", str(config_path),
         "--model", "openai/fake-model", "--api-base", fake_llm.base_url, "--approve", "auto",
         "--output", "jsonl", "go"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})

    def wait_until(check: Callable[[], object], limit: float, what: str) -> None:
        deadline = time.monotonic() + limit
        while not check():
            assert time.monotonic() < deadline and child.poll() is None, what
            time.sleep(0.05)

    try:
        # Two guards against a hang: the real command's start-up (its imports and the
        # server's start: seconds quiet, over a minute at load 17), then the task.
        wait_until(lambda: fake_llm.requests, 180, "run never asked the model")
        wait_until(lambda: seen(marks, "tasks/get"), 60, "no task began")
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    assert b"Traceback" not in err, err
    return [json.loads(line) for line in out.decode().splitlines()]
