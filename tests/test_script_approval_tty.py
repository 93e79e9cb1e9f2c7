"""Code mode's ``s`` in ``tui-agent run --approve ask``, on a real terminal, against
server-filesystem: ``s`` on the script's read approves its later read, not its write,
which still asks, with its diff; the question says which tools ``s`` covers."""

from __future__ import annotations

import json
import os
import pty
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_progress_lines import read_rest
from tests.test_terminal import read_until
from tests.ui.test_script_approval import filesystem_server, project_files, read_then_write
from tests.waits import wait_pid

pytestmark = pytest.mark.slow
ASKED = b"[y] approve once"


def test_s_on_a_read_leaves_the_write_asking_on_the_terminal(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = project_files(tmp_path, monkeypatch)
    fake_llm.push(Reply(tool_calls=[FakeToolCall(
        "executeToolCode", {"code": read_then_write(project)}, id="s1")]),
        Reply(text="copied"))
    conf = tmp_path / "c.toml"
    conf.write_text(filesystem_server(project), encoding="utf-8")
    argv = [sys.executable, "-m", "tui_agent", "run", "--config", str(conf), "--code-mode",
            "--approve", "ask", "--model", "openai/fake-model", "--api-base",
            fake_llm.base_url, "copy in.txt to out.txt, twice"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real CLI, its terminal a real one
        os.execve(sys.executable, argv, {**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        first = read_until(fd, ASKED, timeout=60)
        os.write(fd, b"s\n")
        second = read_until(fd, ASKED, timeout=60)
        os.write(fd, b"y\n")
        rest = read_rest(fd)
        status = wait_pid(pid, 60)
    finally:
        os.close(fd)
    assert b"wants to run read_text_file" in first
    assert b"wants to run write_file" in second, second.decode()  # the 2nd read did not ask
    assert b"out.txt (+2 \xe2\x88\x921)" in second, second.decode()  # +2 -1 lines
    assert b"-old" in second and b"+hello" in second
    assert b"[s] approves this call and, for the rest of this run, the script's calls of: " \
           b"fs.read_text_file (any other tool it reaches asks again)" in first
    assert b"still asks at each call: fs.write_file (writes files: each write shows its " \
           b"diff)" in first
    assert os.waitstatus_to_exitcode(status) == 0, rest.decode()[-2000:]
    assert json.dumps((project / "out.txt").read_text(encoding="utf-8")) == '"hello\\nhello\\n"'
