"""When the built-in server's commands cannot be sandboxed, every ``shell`` call asks:
the server that runs them says so (``_meta["io.tui-agent/always-ask"]``), not a guess
of the app's. The real ``tui-agent tools serve`` with a ``bwrap`` that fails in its own
``PATH`` only (bubblewrap works in this process's), and an ``auto`` entry for ``shell``
that would otherwise let it run: ``tui-agent run --approve deny`` refuses the call and
says why. The app's modal: tests/ui/test_unsandboxed_modal.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e_kit import entry_point, local_config, run
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project, local_table
from tests.shell_kit import broken_bwrap

_ = entry_point

pytestmark = pytest.mark.slow

UNSANDBOXED = "commands run without a sandbox on this machine"


def unsandboxed_local(tmp_path: Path) -> str:
    """A ``[servers.local]`` table: the built-in server, with a broken ``bwrap`` first in
    its ``PATH`` and ``shell`` in its ``auto`` list."""
    return (local_table(PATH=f"{broken_bwrap(tmp_path / 'bin')}:{os.environ['PATH']}")
            + 'auto = ["read", "list", "glob", "grep", "shell"]\n')


def test_run_refuses_an_unsandboxed_command_that_auto_would_run(
        tmp_path: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    project = local_project(tmp_path, monkeypatch, {"notes.txt": "hello\n"})
    config = local_config(tmp_path, fake_llm.base_url, unsandboxed_local(tmp_path))
    fake_llm.push(Reply(tool_calls=[
        FakeToolCall("local__read", {"path": "notes.txt"}, id="r"),
        FakeToolCall("local__shell", {"command": "echo ran > ran.txt"}, id="s")]),
        Reply(text="could not run it"))
    result = run(capsys, config, "run it", "--approve", "deny")
    assert result.code == 0, (result.events, result.err)
    decisions = {e["id"]: e for e in result.of("approval")}
    assert decisions["r"]["decision"] == "auto"  # the rest of the auto list still holds
    assert decisions["s"]["decision"] == "denied", decisions
    assert UNSANDBOXED in decisions["s"]["reason"], decisions["s"]
    assert not (project / "ran.txt").exists()
    results = {e["id"]: e["text"] for e in result.of("tool_result")}
    assert "denied" in results["s"] and UNSANDBOXED in results["s"], results["s"]
