"""Bad input to ``tui-agent acp``, spoken as raw JSON-RPC lines (what a broken or hostile
client sends): a malformed message, an unknown method and a prompt to an unknown session
get JSON-RPC errors and the agent goes on serving; a client that disappears mid-turn ends
the run cleanly. Every line on stdout is JSON-RPC: no traceback, no stray print."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from tests.acp_kit import config
from tests.fakes.llm_server import FakeLLM, Reply
from tests.zygote import command

pytestmark = pytest.mark.slow


def start(conf: Path, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([*command(), "acp", "--config", str(conf)], cwd=cwd,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(cwd / "stderr.log", "w"),  # noqa: SIM115
                            text=True, env=dict(os.environ))


def send(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()


_LINES: dict[IO[str], queue.Queue[str]] = {}


def next_line(out: IO[str], timeout: float = 120) -> str:
    """The agent's next line on ``out`` (``""`` once it closed it), waited for at most
    ``timeout`` seconds: a thread reads the pipe, so an agent that never answers fails the
    test instead of hanging it."""
    lines = _LINES.get(out)
    if lines is None:
        lines = _LINES[out] = queue.Queue()

        def pump(into: queue.Queue[str] = lines) -> None:
            for line in iter(out.readline, ""):
                into.put(line)
            into.put("")

        threading.Thread(target=pump, daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no line from the agent in {timeout:g}s") from None


def rest_of(out: IO[str]) -> list[str]:
    """The agent's remaining lines on ``out``, until it closed it."""
    rest = []
    while line := next_line(out):
        rest.append(line)
    return rest


def answer(out: IO[str], want_id: Any) -> dict[str, Any]:
    """The response to request ``want_id`` (notifications before it are skipped); every
    line read must be JSON-RPC."""
    while True:
        line = next_line(out)
        assert line, "the agent closed stdout"
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line
        if "result" in message or "error" in message:  # a response: it must be this one
            assert message.get("id") == want_id, line
            return dict(message)


def request(proc: subprocess.Popen[str], rid: int, method: str, params: dict[str, Any]
            ) -> dict[str, Any]:
    send(proc, json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
    assert proc.stdout is not None
    return answer(proc.stdout, rid)


def test_bad_messages_get_errors_and_the_agent_goes_on(fake_llm: FakeLLM,
                                                       tmp_path: Path) -> None:
    fake_llm.push(Reply(text="still here"))
    proc = start(config(tmp_path, fake_llm), tmp_path)
    try:
        assert request(proc, 1, "initialize", {"protocolVersion": 1})["result"][
            "protocolVersion"] == 1
        send(proc, '{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {')
        assert proc.stdout is not None
        assert answer(proc.stdout, None)["error"]["code"] == -32700
        send(proc, "[1, 2]")
        assert answer(proc.stdout, None)["error"]["code"] == -32600
        assert request(proc, 3, "no/such_method", {})["error"]["code"] == -32601
        unknown = request(proc, 4, "session/prompt", {
            "sessionId": "ghost", "prompt": [{"type": "text", "text": "hi"}]})["error"]
        assert unknown["code"] == -32602 and "ghost" in json.dumps(unknown)
        bad = request(proc, 5, "session/new", {"cwd": 7})["error"]
        assert bad["code"] == -32602
        relative = request(proc, 6, "session/new", {"cwd": "rel/dir", "mcpServers": []})
        assert "absolute" in json.dumps(relative["error"])
        sid = request(proc, 7, "session/new", {"cwd": str(tmp_path),
                                               "mcpServers": []})["result"]["sessionId"]
        done = request(proc, 8, "session/prompt", {
            "sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})
        assert done["result"]["stopReason"] == "end_turn"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(30) == 0
        assert proc.stdout is not None
        rest = rest_of(proc.stdout)
        proc.stdout.close()
    for line in rest:
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


def test_a_client_that_vanishes_mid_turn_ends_the_run_cleanly(fake_llm: FakeLLM,
                                                              tmp_path: Path) -> None:
    fake_llm.push(Reply(text="never finished", hang=True))
    proc = start(config(tmp_path, fake_llm), tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    request(proc, 1, "initialize", {"protocolVersion": 1})
    sid = request(proc, 2, "session/new", {"cwd": str(tmp_path),
                                           "mcpServers": []})["result"]["sessionId"]
    send(proc, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
        "sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}}))
    deadline = time.monotonic() + 30
    while not fake_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.stdin.close()  # the editor is gone
    assert proc.wait(30) == 0
    for line in rest_of(proc.stdout):
        assert json.loads(line)["jsonrpc"] == "2.0"
    proc.stdout.close()
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()
    sessions = list((tmp_path / "home" / "data").rglob(f"{sid}*.jsonl"))
    assert sessions, "the session was not kept"


def test_the_sdk_is_imported_only_by_the_acp_command(tmp_path: Path) -> None:
    """The other commands (and ``--help``) never pay for the ACP SDK; ``acp --help`` works
    and a bad config fails before the protocol starts, on stderr, exit 2."""
    code = ("import sys\nimport tui_agent.cli\n"
            "print(sorted(m for m in sys.modules if m == 'acp' or m.startswith(('acp.', "
            "'tui_agent.acp'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
    helped = subprocess.run([*command(), "acp", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "--config" in helped.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("[model\n", encoding="utf-8")
    failed = subprocess.run([*command(), "acp", "--config", str(bad)], capture_output=True,
                            text=True, stdin=subprocess.DEVNULL)
    assert failed.returncode == 2 and failed.stdout == ""
    assert "bad.toml" in failed.stderr and "Traceback" not in failed.stderr


def test_a_line_over_the_limit_is_refused_and_the_next_is_answered(fake_llm: FakeLLM,
                                                                  tmp_path: Path) -> None:
    """A message over the 50 MiB limit (sent for real: one line through the pipe) gets a
    parse error; the agent reads on, and the next request is answered."""
    from tui_agent.acp.serve import STDIO_LIMIT

    proc = start(config(tmp_path, fake_llm), tmp_path)
    try:
        assert proc.stdout is not None
        request(proc, 1, "initialize", {"protocolVersion": 1})
        filler = "a" * (STDIO_LIMIT + 1024 * 1024)
        send(proc, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                               "params": {"cwd": str(tmp_path), "pad": filler}}))
        refused = answer(proc.stdout, None)["error"]
        assert refused["code"] == -32700 and "over" in refused["message"]
        sid = request(proc, 3, "session/new", {"cwd": str(tmp_path),
                                               "mcpServers": []})["result"]["sessionId"]
        assert sid
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(30) == 0
        assert proc.stdout is not None
        proc.stdout.close()
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


@pytest.mark.parametrize("side", ["input", "output"])
def test_a_file_for_stdio_is_named_not_a_traceback(fake_llm: FakeLLM, tmp_path: Path,
                                                   side: str) -> None:
    """``tui-agent acp < request.json`` (or ``> out``): asyncio's pipes refuse a regular
    file; the agent says what it talks over and exits 2, writing nothing to stdout."""
    conf = config(tmp_path, fake_llm)
    request_file, out_file = tmp_path / "request.json", tmp_path / "out.txt"
    request_file.write_text('{"jsonrpc": "2.0", "id": 1, "method": "initialize"}\n')
    with request_file.open() as given, out_file.open("w") as taken:
        done = subprocess.run(
            [*command(), "acp", "--config", str(conf)], cwd=tmp_path, timeout=60, text=True,
            stdin=given if side == "input" else subprocess.DEVNULL,
            stdout=taken if side == "output" else subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.returncode == 2, done.stderr
    assert f"its {side} is a file; it talks over pipes" in done.stderr
    assert "Traceback" not in done.stderr
    assert out_file.read_text() == "" and not (done.stdout or "")


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_typed_in_a_terminal_it_says_what_it_waits_for(fake_llm: FakeLLM, tmp_path: Path,
                                                       inherited: str) -> None:
    """`tui-agent acp` on a terminal says, on stderr, that it speaks ACP and waits for an
    editor, then waits as before, and Ctrl-C ends it (130); from an editor (pipes) it says
    nothing, as the other tests here show by reading every stdout line as JSON-RPC.

    ``ignored``: started with SIGINT ignored, as a background job of a non-interactive
    shell starts (and as pytest run so passes it on): Ctrl-C still ends it. It used to
    wait forever."""
    import pty
    import signal

    from tests.test_terminal import read_until
    from tests.waits import kill_pid, wait_pid

    conf = config(tmp_path, fake_llm)
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on a real terminal
        os.chdir(tmp_path)
        signal.signal(signal.SIGINT, signal.SIG_IGN if inherited == "ignored"
                      else signal.default_int_handler)
        os.execvp(command()[0], [*command(), "acp", "--config", str(conf)])
    try:
        seen = read_until(fd, b"Ctrl-C ends it", timeout=120)
        assert b"Agent Client Protocol on stdin/stdout" in seen and b"editor" in seen
        time.sleep(0.5)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), "it did not wait for an editor"
        os.kill(pid, signal.SIGINT)
        status = wait_pid(pid, 60, "tui-agent acp to end on Ctrl-C")
        assert os.waitstatus_to_exitcode(status) == 130
    finally:
        kill_pid(pid)
        os.close(fd)
