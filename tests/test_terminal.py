"""The parts that talk to a real terminal: the ``--approve ask`` prompt and the
line-mode chat, driven through a pseudo-terminal."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.waits import wait_pid
from tui_agent.config import paths
from tui_agent.core.permissions import Decision, PendingCall
from tui_agent.core.session import load
from tui_agent.headless.gate import TerminalGate

ROOT = Path(__file__).resolve().parents[1]
CALL = PendingCall("c1", "fs__write", "fs", "write", {"path": "/tmp/x", "text": "\x1b[2Jhi"},
                   description="Write a file.\x1b]52;c;aGk=\x07")


def read_until(fd: int, marker: bytes, timeout: float = 90) -> bytes:
    """What ``fd`` gave until ``marker``; a bound, not a speed test (a line-mode chat's
    first prompt took over 20 s in a CI run beside another suite)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"never saw {marker!r}; got {seen[-400:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def ask_on_a_pty(call: PendingCall, answer: bytes) -> tuple[Decision, bytes]:
    """Ask ``call`` on a fresh pty, type ``answer`` once it prompts; the decision and
    everything the prompt showed."""
    master, slave = pty.openpty()
    try:
        gate = TerminalGate(os.ttyname(slave))

        async def ask_and_answer() -> tuple[Decision, bytes]:
            pending = asyncio.create_task(gate.decide(call))
            shown = await asyncio.to_thread(read_until, master, b"a reason: ")
            os.write(master, answer)
            return await pending, shown

        return asyncio.run(ask_and_answer())
    finally:
        os.close(master)
        os.close(slave)


@pytest.mark.parametrize(("answer", "approved", "reason"), [
    (b"y\n", True, None), (b"n\n", False, None), (b"r\nnot today\n", False, "not today")])
def test_terminal_gate_asks_on_the_tty(answer: bytes, approved: bool, reason: str | None) -> None:
    decision, shown = ask_on_a_pty(CALL, answer)
    assert (decision.approved, decision.reason) == (approved, reason)
    assert b"fs wants to run write" in shown and b"/tmp/x" in shown
    assert b"\x1b" not in shown.replace(b"\x1b[", b"")  # only the pty's own echo codes
    assert b"\x1b[2J" not in shown and b"]52;" not in shown


def test_a_call_from_a_script_can_approve_the_rest_of_the_script() -> None:
    decision, shown = ask_on_a_pty(replace(CALL, id="s1.1", parent="s1",
                                           script_tools=("fs.write",)), b"s\n")
    assert decision.approved and decision.script
    assert b"called by the script s1" in shown and b"[s] approve the listed tools" in shown


def test_a_script_that_names_nothing_to_approve_ahead_is_not_offered_s() -> None:
    """Every tool it names is held (it writes files, say): ``s`` would approve this call
    once, as ``y`` does, so it is neither offered nor taken, and the question says why."""
    call = replace(CALL, id="s1.1", parent="s1", script_held=(("fs.write", "writes files"),))
    decision, shown = ask_on_a_pty(call, b"s\nn\n")
    assert not decision.approved and not decision.script
    assert b"[s]" not in shown
    assert b"each call of this script asks: none of the tools it names can be approved " \
        b"ahead" in shown and b"still asks at each call: fs.write (writes files)" in shown


def test_gate_without_a_terminal_denies() -> None:
    decision = asyncio.run(TerminalGate("/nonexistent/tty").decide(CALL))
    assert not decision.approved and "no terminal" in (decision.reason or "")


def line_mode_chat(fake_llm: FakeLLM) -> tuple[int, int]:
    """``tui-agent run`` with no prompt (the line-mode chat) on a fresh pseudo-terminal,
    against ``fake_llm``: its pid and the terminal's master end."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real CLI on a real terminal
        os.environ["PYTHONPATH"] = str(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "tui_agent", "run", "--model",
                                  "openai/fake-model", "--api-base", fake_llm.base_url])
    return pid, fd


def test_line_mode_chat_holds_a_conversation(fake_llm: FakeLLM) -> None:
    """`tui-agent run` without a prompt on a terminal is the line-mode chat: two turns,
    Ctrl-D, and the session has all four messages."""
    fake_llm.push(Reply(text="Hello, Ada."), Reply(text="You are Ada."))
    pid, fd = line_mode_chat(fake_llm)
    try:
        read_until(fd, "› ".encode())
        os.write(fd, b"I am Ada\n")
        assert b"Hello, Ada." in read_until(fd, "› ".encode())
        os.write(fd, b"who am I?\n")
        assert b"You are Ada." in read_until(fd, "› ".encode())
        os.write(fd, b"\x04")  # Ctrl-D
        status = wait_pid(pid, 60)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    conv = load(next(paths.sessions_dir().glob("*.jsonl")))
    assert [m["content"] for m in conv.messages] == ["I am Ada", "Hello, Ada.", "who am I?",
                                                     "You are Ada."]


def test_ctrl_c_before_anything_is_said_keeps_nothing_and_says_so(fake_llm: FakeLLM) -> None:
    """Ctrl-C at the line-mode chat's first prompt: exit 130, no session file left (nor
    its metrics), and no offer to resume what is not there."""
    pid, fd = line_mode_chat(fake_llm)
    try:
        read_until(fd, "› ".encode())
        os.write(fd, b"\x03")
        said = read_until(fd, b"nothing is kept")
        status = wait_pid(pid, 60)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 130
    assert b"--resume" not in said and b"Traceback" not in said
    store = paths.sessions_dir()
    assert (list(store.iterdir()) if store.exists() else []) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_keeps_the_session(fake_llm: FakeLLM, signum: int) -> None:
    """Ctrl-C or SIGTERM in the middle of a headless reply: exit 130, session loadable."""
    fake_llm.push(Reply(text="tick " * 300, chunk_chars=5, delay=0.02))
    proc = subprocess.Popen([sys.executable, "-m", "tui_agent", "run", "--model",
                             "openai/fake-model", "--api-base", fake_llm.base_url, "count"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    assert proc.stdout.read(20)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()[-3000:]
    assert b"interrupted" in err and b"Traceback" not in err
    conv = load(next(paths.sessions_dir().glob("*.jsonl")))
    assert conv.entries[-1].incomplete
    assert conv.entries[-1].message["content"].startswith("tick tick")


@pytest.mark.parametrize("after", [0.1, 0.3, 0.8])
def test_ctrl_c_at_any_moment_of_a_headless_run_exits_130(fake_llm: FakeLLM,
                                                          after: float) -> None:
    """Ctrl-C while litellm loads, the request starts or the reply streams: always 130
    (the exit code comes from the signal, not from how the cancelled turn happened to
    end), never a traceback."""
    fake_llm.push(Reply(text="tick " * 300, chunk_chars=5, delay=0.02))
    # The moments count from Python's own start-up being over (a Ctrl-C inside the
    # interpreter's start is the interpreter's, and a loaded machine can stretch that
    # start past 0.1 s): the child says so on stderr, then runs `python -m tui_agent`.
    started = ("import runpy, sys; sys.stderr.write('started\\n'); sys.stderr.flush(); "
               "runpy.run_module('tui_agent', run_name='__main__', alter_sys=True)")
    proc = subprocess.Popen([sys.executable, "-c", started, "run", "--model",
                             "openai/fake-model", "--api-base", fake_llm.base_url, "count"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stderr is not None
    assert proc.stderr.readline() == b"started\n"
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()[-3000:]
    assert b"interrupted" in err and b"Traceback" not in err


def test_a_ctrl_c_that_an_import_turned_into_another_error_still_exits_130(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGINT inside an extension's import can come out as another error with no trace
    of the interrupt (pydantic-core: an ImportError, then pyo3's PanicException): after a
    SIGINT it is an interrupt all the same; without one, the error is not hidden. The
    handler before ``main`` is back after it."""
    import tui_agent.cli as cli

    def interrupted_import(words: list[str]) -> int:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler runs at the next bytecode
        except KeyboardInterrupt:
            raise ImportError("could not import module 'datetime'") from None
        return 0

    def broken_import(words: list[str]) -> int:
        raise ImportError("a real one")

    before = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(cli, "_command", interrupted_import)
    assert cli.main(["run", "x"]) == 130
    assert "tui-agent: interrupted" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before
    monkeypatch.setattr(cli, "_command", broken_import)
    with pytest.raises(ImportError, match="a real one"):
        cli.main(["run", "x"])
    assert signal.getsignal(signal.SIGINT) is before


def test_a_ctrl_c_inside_a_callback_that_swallows_errors_is_not_lost(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGINT can land in a weakref callback or a ``__del__`` (the import system's
    module-lock callbacks run in the middle of imports: a busy run caught one), where
    Python prints "Exception ignored in ..." and drops the ``KeyboardInterrupt``. The
    command must still end as interrupted, without that trace; outside ``main`` Python's
    own hook is back."""
    import tui_agent.cli as cli

    class Dropped:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler's KeyboardInterrupt ends this, and is swallowed

    def swallowing_command(words: list[str]) -> int:
        Dropped()  # gone at once: __del__ runs here
        # A lost interrupt would let this run out. In short sleeps: a signal that comes
        # just before a blocking call begins is handled when the call returns (Python's
        # way with every signal), which one long sleep would stretch to its end.
        for _ in range(200):
            time.sleep(0.1)
        return 0

    hook = sys.unraisablehook
    monkeypatch.setattr(cli, "_command", swallowing_command)
    begun = time.monotonic()
    assert cli.main(["run", "x"]) == 130
    assert time.monotonic() - begun < 15
    err = capsys.readouterr().err
    assert "tui-agent: interrupted" in err and "Exception ignored" not in err, err
    assert sys.unraisablehook is hook


def test_a_swallowed_ctrl_c_as_the_command_ends_is_still_an_interrupt(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The swallowed interrupt's second delivery may not come before the command ends: it
    ended interrupted all the same (130, not 0), and no SIGINT is sent once ``main`` is
    over (it would be the caller's: here, pytest's)."""
    import tui_agent.cli as cli

    class Dropped:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)

    def ends_at_once(words: list[str]) -> int:
        Dropped()
        return 0

    monkeypatch.setattr(cli, "_command", ends_at_once)
    try:
        code = cli.main(["run", "x"])
    except KeyboardInterrupt:  # the second delivery landed on main's way out: entry()'s
        code = 130
    time.sleep(0.5)  # a SIGINT sent after the watch would raise KeyboardInterrupt here
    assert code == 130
    assert "Exception ignored" not in capsys.readouterr().err


def test_cancelled_prompt_does_not_hold_up_the_exit() -> None:
    """A turn cancelled while the approval prompt waits must not wait for an answer."""
    master, slave = pty.openpty()
    try:
        gate = TerminalGate(os.ttyname(slave))

        async def cancel_while_asking() -> None:
            pending = asyncio.create_task(gate.decide(CALL))
            await asyncio.to_thread(read_until, master, b"a reason: ")
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending

        # In a thread of its own, so that a regression fails here instead of hanging.
        finished = threading.Event()

        def run_it() -> None:
            asyncio.run(cancel_while_asking())
            finished.set()

        threading.Thread(target=run_it, daemon=True).start()
        assert finished.wait(20), "the cancelled prompt held the event loop's exit"
    finally:
        os.close(master)
        os.close(slave)
