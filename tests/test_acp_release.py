"""What ``tui-agent acp`` holds and what it refuses, spoken as raw JSON-RPC lines: sessions
are released (``session/close``, the least recently used beyond the bound, the end of
the connection) so that an editor that opens many never runs the process out of file
handles, and a released one comes back on demand; a request the protocol forbids (an
object as id, a cwd that is no folder) is refused, an unknown notification is ignored
without a traceback, and a session another process holds is refused as a bad parameter."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp_kit import config
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_acp_errors import answer, request, send, start

pytestmark = pytest.mark.slow


def new(proc: subprocess.Popen[str], rid: int, cwd: Path) -> dict[str, Any]:
    return request(proc, rid, "session/new", {"cwd": str(cwd), "mcpServers": []})


def ended(proc: subprocess.Popen[str], log: Path) -> None:
    """Close the agent's input; it ends cleanly, with no traceback on stderr."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    try:
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.stdout.close()
    assert "Traceback" not in log.read_text()


def stored(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "home" / "data").rglob("*.jsonl"))


def test_forbidden_requests_are_refused_and_unknown_notifications_ignored(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    proc = start(config(tmp_path, fake_llm), tmp_path)
    assert proc.stdout is not None
    try:
        request(proc, 1, "initialize", {"protocolVersion": 1})
        send(proc, json.dumps({"jsonrpc": "2.0", "method": "no/such_notification",
                               "params": {}}))
        send(proc, json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/new",
                               "params": {"cwd": str(tmp_path), "mcpServers": []}}))
        refused = answer(proc.stdout, None)["error"]
        assert refused["code"] == -32600 and "id" in refused["message"]
        missing = new(proc, 2, tmp_path / "gone")["error"]
        assert missing["code"] == -32602 and "does not exist" in json.dumps(missing)
        (tmp_path / "a-file").write_text("x")
        not_folder = new(proc, 3, tmp_path / "a-file")["error"]
        assert not_folder["code"] == -32602 and "not a folder" in json.dumps(not_folder)
        assert stored(tmp_path) == [], "a refused session/new left a file"
    finally:
        ended(proc, tmp_path / "stderr.log")


def test_a_session_another_process_holds_is_a_bad_parameter(fake_llm: FakeLLM,
                                                           tmp_path: Path) -> None:
    fake_llm.push(Reply(text="kept"))
    conf = config(tmp_path, fake_llm)
    first = start(conf, tmp_path)
    second_dir = tmp_path / "second"
    second_dir.mkdir()
    second = start(conf, second_dir)
    try:
        request(first, 1, "initialize", {"protocolVersion": 1})
        sid = new(first, 2, tmp_path)["result"]["sessionId"]
        request(first, 3, "session/prompt", {"sessionId": sid,
                                             "prompt": [{"type": "text", "text": "hi"}]})
        request(second, 1, "initialize", {"protocolVersion": 1})
        held = request(second, 2, "session/load", {"sessionId": sid, "cwd": str(tmp_path),
                                                   "mcpServers": []})["error"]
        assert held["code"] == -32602 and "another tui-agent process" in json.dumps(held)
    finally:
        ended(second, second_dir / "stderr.log")
        ended(first, tmp_path / "stderr.log")


def test_a_closed_session_is_gone_and_its_file_kept(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="one"))
    proc = start(config(tmp_path, fake_llm), tmp_path)
    try:
        caps = request(proc, 1, "initialize", {"protocolVersion": 1})["result"]
        assert "close" in caps["agentCapabilities"]["sessionCapabilities"]
        sid = new(proc, 2, tmp_path)["result"]["sessionId"]
        request(proc, 3, "session/prompt", {"sessionId": sid,
                                            "prompt": [{"type": "text", "text": "hi"}]})
        assert request(proc, 4, "session/close", {"sessionId": sid})["result"] == {}
        gone = request(proc, 5, "session/prompt", {
            "sessionId": sid, "prompt": [{"type": "text", "text": "again"}]})["error"]
        assert gone["code"] == -32602
        assert request(proc, 6, "session/close", {"sessionId": sid})["error"]["code"] == -32602
        blank = new(proc, 7, tmp_path)["result"]["sessionId"]
        request(proc, 8, "session/close", {"sessionId": blank})
        assert [p.stem for p in stored(tmp_path)] == [sid], "nothing said: no file kept"
    finally:
        ended(proc, tmp_path / "stderr.log")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_many_sessions_fit_under_a_low_open_file_limit(fake_llm: FakeLLM,
                                                      tmp_path: Path) -> None:
    """The real process (the zygote's children cannot be given a limit of their own), its
    limit set to what it holds once started plus 12: 40 sessions open (the idle ones
    beyond the bound are released), the first is prompted (opened again from its file),
    and the store lists only the conversation something was said in."""
    fake_llm.push(Reply(text="still here"))
    conf = config(tmp_path, fake_llm)
    proc = subprocess.Popen([sys.executable, "-m", "tui_agent", "acp", "--config", str(conf)],
                            cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(tmp_path / "stderr.log", "w"),  # noqa: SIM115
                            text=True, env=dict(os.environ))
    try:
        request(proc, 1, "initialize", {"protocolVersion": 1})
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (open_fds(proc.pid) + 12, hard))
        ids: list[str] = []
        for rid in range(2, 42):
            answered = new(proc, rid, tmp_path)
            assert "result" in answered, (len(ids), answered)
            ids.append(answered["result"]["sessionId"])
        done = request(proc, 50, "session/prompt", {
            "sessionId": ids[0], "prompt": [{"type": "text", "text": "hi"}]})
        assert done["result"]["stopReason"] == "end_turn"
        assert open_fds(proc.pid) < resource.prlimit(proc.pid, resource.RLIMIT_NOFILE)[0]
    finally:
        ended(proc, tmp_path / "stderr.log")
    assert [p.stem for p in stored(tmp_path)] == [ids[0]]
