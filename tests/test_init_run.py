"""``/init`` in ``tui-agent run``: the model drafts the project's AGENTS.md in a turn with
the fixed instruction, and the write is a question to run's gate (``--approve auto``
writes exactly the draft, ``deny`` writes nothing, ``ask`` shows the diff on the real
terminal). Each outcome is a line on stderr (``--output jsonl``: an ``init`` event) and
an exit code: 0 written or denied, 1 no draft or cannot write, 2 no project."""

from __future__ import annotations

import json
import os
import pty
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_progress_lines import read_rest
from tests.test_terminal import read_until
from tests.waits import wait_pid
from tui_agent.cli import main
from tui_agent.config.trust import content_trusted

pytestmark = pytest.mark.slow
DRAFT = "# Shop\n\nRun the tests:\n\n```sh\nmake test\n```\n"


def answer(content: str) -> Reply:
    return Reply(text=f"I looked at the project.\n\n<agents-md>\n{content}</agents-md>\n")


@pytest.fixture
def project(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git project under HOME, the run started in a folder of it."""
    monkeypatch.setenv("HOME", str(isolated_env))
    root = isolated_env / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    monkeypatch.chdir(root / "src")
    return root


def _run(fake: FakeLLM, *args: str) -> list[str]:
    return ["run", "--model", "openai/fake-model", "--api-base", fake.base_url, *args]


def test_approved_it_writes_exactly_the_draft_in_the_project_root(
        fake_llm: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(answer(DRAFT))
    assert main(_run(fake_llm, "--approve", "auto", "/init")) == 0
    memory = project / "AGENTS.md"
    assert memory.read_text(encoding="utf-8") == DRAFT
    asked = str(fake_llm.requests[0]["messages"][-1]["content"])
    assert asked.startswith("/init: Draft AGENTS.md for this project") and str(memory) in asked
    err = capsys.readouterr().err
    assert f"/init: wrote {memory} (7 lines): the next run reads it as memory\n" in err
    assert content_trusted(project), "its only memory file, every word approved: trusted"


def test_denied_nothing_is_written_and_the_exit_is_0(
        fake_llm: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "CLAUDE.md").write_text("old notes\n", encoding="utf-8")
    fake_llm.push(answer(DRAFT))
    assert main(["--model", "openai/fake-model", "-p", "/init", "--api-base",
                 fake_llm.base_url, "--approve", "deny", "--trust-project"]) == 0
    assert (project / "CLAUDE.md").read_text(encoding="utf-8") == "old notes\n"
    assert not (project / "AGENTS.md").exists()
    assert "already has CLAUDE.md" in str(fake_llm.requests[0]["messages"][-1]["content"])
    err = capsys.readouterr().err
    assert "/init: denied (/init writes a file only with your approval, and this run denies " \
           f"every tool that would ask (--approve deny)): {project / 'CLAUDE.md'} not written" \
           in err


def test_a_reply_without_a_draft_writes_nothing_and_fails(
        fake_llm: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="Here is a summary of the project, no file."))
    assert main(_run(fake_llm, "--approve", "auto", "/init")) == 1
    assert not (project / "AGENTS.md").exists()
    assert "/init: the reply holds no AGENTS.md (its content between a line <agents-md> and " \
           "a line </agents-md>): nothing written" in capsys.readouterr().err


def test_no_project_sends_nothing_and_exits_2(
        fake_llm: FakeLLM, project: Path, isolated_env: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(isolated_env)  # the home folder is no project
    assert main(_run(fake_llm, "--approve", "auto", "/init")) == 2
    assert fake_llm.requests == []
    assert "/init: no project here to write AGENTS.md in" in capsys.readouterr().err
    assert not (isolated_env / "AGENTS.md").exists()


def test_a_file_that_cannot_be_written_is_said_and_fails(
        fake_llm: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "AGENTS.md").mkdir()  # a folder where the file would go
    fake_llm.push(answer(DRAFT))
    assert main(_run(fake_llm, "--approve", "auto", "--trust-project", "/init")) == 1
    err = capsys.readouterr().err
    assert f"/init: cannot write {project / 'AGENTS.md'}: " in err
    assert (project / "AGENTS.md").is_dir()


def test_jsonl_emits_an_init_event(fake_llm: FakeLLM, project: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(answer(DRAFT))
    assert main(_run(fake_llm, "--approve", "auto", "--output", "jsonl", "/init")) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    done = [e for e in events if e["type"] == "init"]
    assert done == [{"type": "init", "outcome": "written", "path": str(project / "AGENTS.md"),
                     "lines": 7, "message": done[0]["message"]}]
    assert done[0]["message"].startswith("/init: wrote ")
    assert events[-1]["type"] == "init", "after the turn's done"


def test_ask_shows_the_diff_on_the_terminal_and_writes_on_yes(
        fake_llm: FakeLLM, project: Path) -> None:
    fake_llm.push(answer(DRAFT))
    argv = [sys.executable, "-m", "tui_agent", *_run(fake_llm, "--approve", "ask", "/init")]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real CLI, its terminal a real one
        os.execve(sys.executable, argv, {**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        asked = read_until(fd, b"[y] approve once", timeout=60)
        os.write(fd, b"y\n")
        rest = read_rest(fd)
        status = wait_pid(pid, 60)
    finally:
        os.close(fd)
    assert b"tui-agent wants to run /init" in asked
    assert b"creates AGENTS.md (new file)" in asked and b"+make test" in asked
    assert os.waitstatus_to_exitcode(status) == 0, rest.decode()[-2000:]
    assert b"/init: wrote " in rest
    assert (project / "AGENTS.md").read_text(encoding="utf-8") == DRAFT
