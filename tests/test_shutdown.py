"""Graceful shutdown: SIGINT, SIGTERM, SIGHUP and the quit key end the same way (the turn
in flight cancelled and recorded, the session flushed, every server closed, the terminal
restored); a second signal exits at once and the session still loads. Through the command
as the suite starts it (:data:`tests.zygote.TUI_AGENT`: a child of the worker's zygote,
whose launcher relays each signal and ends as the child ended), on a real pseudo-terminal
for the chat app: a fresh interpreter per test cost ~3 s of CPU in imports. The terminal
is the launcher's controlling terminal, not the child's; what only a controlling terminal
brings (its hang-up) is tested on the real command by test_hangup."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FAKE_MODEL, ROOT, tagged_processes
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_terminal import read_until
from tests.ui.kit import write_config
from tests.ui.test_startup import _drain
from tests.waits import wait_pid
from tests.zygote import REAL, TUI_AGENT
from tui_agent.config import paths
from tui_agent.core.session import Conversation, SessionStore, load

pytestmark = pytest.mark.slow

STREAM = Reply(text="streaming " + "word " * 2000, chunk_chars=5, delay=0.01)
HANG = Reply(tool_calls=[FakeToolCall("a__hang", {}, id="h1")])


def config(tmp_path: Path, fake: FakeLLM) -> Path:
    return write_config(tmp_path / "c.toml", base_url=fake.base_url, servers={"a": []},
                        extra='auto = ["hang"]\n')


class Terminal:
    """``tui-agent`` on a pseudo-terminal: by default the real command, whose controlling
    terminal this is (test_hangup's hang-ups need that, and its pid to be the app's)."""

    def __init__(self, *args: str, command: list[str] = REAL) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", COLUMNS="100",
                              LINES="30")
            os.execv(command[0], [*command, *args])
        self.seen = b""

    def wait_for(self, marker: bytes) -> None:
        # A bound, not a speed test: a streamed reply took past 30 s to show with a
        # second suite and three engineers' tests on the 2 CPUs.
        self.seen += read_until(self.fd, marker, timeout=90)

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def end(self, timeout: float = 30) -> int:
        """Everything until the app closes the terminal; its exit code."""
        try:
            self.seen += _drain(self.fd, self.pid, timeout=timeout)
            status = wait_pid(self.pid, timeout)
        finally:
            os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def in_a_turn(tmp_path: Path, fake: FakeLLM, reply: Reply, prompt: bytes,
              marker: bytes) -> Terminal:
    """The app on a terminal, ``prompt`` sent, and ``marker`` (the reply streaming, or
    the tool card running) on screen."""
    fake.push(reply)
    term = Terminal("--config", str(config(tmp_path, fake)), command=TUI_AGENT)
    term.wait_for(FAKE_MODEL.encode())
    time.sleep(0.3)
    term.type(prompt + b"\r")
    term.wait_for(marker)
    return term


def latest_session() -> Conversation:
    path = SessionStore(paths.sessions_dir()).latest()
    assert path is not None, "no session was written"
    return load(path)


def restored(seen: bytes) -> bool:
    return b"\x1b[?1049h" in seen and seen.rindex(b"\x1b[?1049l") > seen.index(b"\x1b[?1049h")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_a_streaming_turn(signum: int, fake_llm: FakeLLM, tmp_path: Path,
                                          no_leftover_servers: str) -> None:
    # "streaming word" on screen: the session holds it too (each fragment is recorded
    # before it is shown); "streaming" alone raced the next fragment on a loaded machine.
    term = in_a_turn(tmp_path, fake_llm, STREAM, b"hello", b"streaming word")
    started = time.monotonic()
    os.kill(term.pid, signum)
    code = term.end()
    assert code == 128 + signum
    assert time.monotonic() - started < 10
    assert restored(term.seen) and b"Traceback" not in term.seen
    conv = latest_session()
    last = conv.entries[-1]
    assert last.message["role"] == "assistant" and last.incomplete
    assert str(last.message["content"]).startswith("streaming word")
    assert not tagged_processes(no_leftover_servers), "a server outlived the app"


def test_sigterm_during_a_tool_call(fake_llm: FakeLLM, tmp_path: Path,
                                    no_leftover_servers: str) -> None:
    term = in_a_turn(tmp_path, fake_llm, HANG, b"hang please", b"running")
    os.kill(term.pid, signal.SIGTERM)
    assert term.end() == 128 + signal.SIGTERM
    assert restored(term.seen) and b"Traceback" not in term.seen
    conv = latest_session()
    roles = [e.message["role"] for e in conv.entries]
    assert roles[-2:] == ["assistant", "tool"], roles
    assert "cancel" in str(conv.entries[-1].message["content"]).lower()
    assert not tagged_processes(no_leftover_servers)


def test_a_second_signal_leaves_at_once(fake_llm: FakeLLM, tmp_path: Path) -> None:
    term = in_a_turn(tmp_path, fake_llm, HANG, b"hang please", b"running")
    os.kill(term.pid, signal.SIGTERM)
    os.kill(term.pid, signal.SIGTERM)
    assert term.end(timeout=10) == 128 + signal.SIGTERM
    assert term.seen.rstrip().endswith(b"\x1b[?2004l") or b"\x1b[?1049l" in term.seen
    conv = latest_session()  # loads: every message was on disk already
    assert conv.entries[0].message == {"role": "user", "content": "hang please"}
    # A call the exit cut short is answered when the conversation is resumed
    # (test_session's test_resumed_session_repairs_calls_a_crash_left_unanswered).
    assert conv.entries[1].message["tool_calls"][0]["id"] == "h1"


def test_headless_sigterm_and_sighup_cancel_and_keep_the_session(
        fake_llm: FakeLLM, tmp_path: Path, no_leftover_servers: str) -> None:
    for signum in (signal.SIGTERM, signal.SIGHUP):
        fake_llm.push(STREAM)
        # Through the zygote (its launcher relays the signal to the command, which handles
        # it as a fresh process would): two fresh processes cost ~8 s of CPU in imports.
        child = subprocess.Popen(
            [*TUI_AGENT, "--config", str(config(tmp_path, fake_llm)),
             "run", "--approve", "deny", "hello"], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert child.stdout is not None
        assert child.stdout.read(9) == b"streaming"
        child.send_signal(signum)
        _, err = child.communicate(timeout=30)
        assert child.returncode == 130, err
        assert b"interrupted; the conversation so far is saved" in err
        assert b"Traceback" not in err
        last = latest_session().entries[-1]
        assert last.incomplete and str(last.message["content"]).startswith("streaming")
        assert not tagged_processes(no_leftover_servers)
