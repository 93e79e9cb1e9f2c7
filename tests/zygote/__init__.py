"""The ``tui-agent`` command for tests, started from a zygote: a process per test worker
that has imported litellm, the MCP SDK and our modules once, and forks a ready child for
each command a test runs (:mod:`tests.zygote.server`). Each ``tui-agent`` the suite
starts otherwise spends ~3 s of CPU importing litellm; there are a few hundred.

Tests use :data:`TUI_AGENT` where they wrote ``[sys.executable, "-m", "tui_agent"]``: a
small launcher (:mod:`tests.zygote.launch`) that passes its stdio, environment, working
directory and arguments to the zygote and stands for the child (signals, exit status).
Tests that must see a real, fresh process (what is imported at start-up, a SIGKILL of
the agent itself, a controlling terminal) use :data:`REAL`. ``TUI_AGENT_TEST_ZYGOTE=0``
turns the zygote off: :data:`TUI_AGENT` is then :data:`REAL`. When the zygote is not up
(still loading is fine: the launcher waits) the launcher runs the real command.

The conftest starts the zygote as the session starts (:func:`start`) and stops it as it
ends (:func:`stop`); before each test :func:`ensure` starts a new one if it died, and
waits until it has loaded, so that no test's own timeouts include the zygote's load.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SWITCH = "TUI_AGENT_TEST_ZYGOTE"
ENABLED = os.environ.get(SWITCH, "1") != "0"
ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = Path(__file__).with_name("launch.py")
SOCKET = os.path.join(tempfile.gettempdir(), f"tui-agent-zygote-{os.getpid()}.sock")
LOG = Path(SOCKET).with_suffix(".log")

REAL: list[str] = [sys.executable, "-m", "tui_agent"]
"""The command as a user runs it: a new interpreter that imports everything itself."""

LAUNCH: list[str] = [sys.executable, "-S", str(LAUNCHER), SOCKET]
"""The launcher alone, whatever :data:`ENABLED` says (the zygote's own tests use it)."""

TUI_AGENT: list[str] = LAUNCH if ENABLED else REAL
"""The command for tests that do not depend on a fresh process: through the zygote."""

SOCKET_VAR = "TUI_AGENT_TEST_ZYGOTE_SOCKET"
"""Set in the test worker's environment while its zygote runs, so that a program the
tests start (the conformance client under Node, say) reaches the same zygote through
:func:`command`."""

RESTARTS = 3


def command() -> list[str]:
    """:data:`TUI_AGENT`, for a process that is not the test worker itself but runs under
    it (the worker's zygote is found through :data:`SOCKET_VAR`): e.g. in
    tests/conformance/run_client.py, ``[*command(), "run", ...]``."""
    socket_path = os.environ.get(SOCKET_VAR)
    if ENABLED and socket_path:
        return [sys.executable, "-S", str(LAUNCHER), socket_path]
    return TUI_AGENT


def module(name: str, *args: str) -> list[str]:
    """``python -m NAME ARGS`` (a fake server, the conformance client) through the
    worker's zygote, which has the MCP SDK's server and client sides imported; or as it
    is, when the zygote is off or this process has none (see :func:`command`)."""
    socket_path = os.environ.get(SOCKET_VAR)
    if ENABLED and socket_path:
        return [sys.executable, "-S", str(LAUNCHER), socket_path, f"--module={name}", *args]
    return [sys.executable, "-m", name, *args]


class _State:
    proc: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = {}
    restarts = 0
    ready = 0
    """The pid of the zygote last seen loaded."""


def start(env: dict[str, str] | None = None) -> None:
    """Start this process's zygote in the background (it listens at once, then loads for
    a few seconds; launchers that come meanwhile wait). ``env`` is its environment,
    by default this one as it is now, before any test changed it."""
    if not ENABLED or _State.proc is not None:
        return
    base = dict(os.environ if env is None else env)
    base.pop(SOCKET_VAR, None)
    base.pop("TUI_AGENT_TEST_TAG", None)  # a test's tag would mark the zygote its leftover
    base["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # as the command sets it before litellm
    _State.env = base
    _launch()
    os.environ[SOCKET_VAR] = SOCKET


def _launch() -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(SOCKET)
    with open(LOG, "ab") as log:
        proc = _State.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote.server", SOCKET], cwd=ROOT, env=_State.env,
            stdin=subprocess.PIPE, stdout=log, stderr=log)
    # Until the socket exists a launcher would run the real command: the zygote binds it
    # first thing, before its long imports, so this is a wait of some 50 ms.
    deadline = time.monotonic() + 10
    while not os.path.exists(SOCKET) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def ensure() -> None:
    """A new zygote when the last one died (a few times at most: a zygote that keeps
    dying is a bug to see in its log, and the launcher runs the real command meanwhile);
    then wait until it has loaded (:func:`wait_ready`)."""
    if _State.proc is not None and _State.proc.poll() is not None \
            and _State.restarts < RESTARTS:
        _State.restarts += 1
        _launch()
    wait_ready()


LOAD_GUARD = 180.0
"""Seconds a zygote may take to load before it counts as hung: ~4 s on a quiet machine,
10 s with two loading at load 9, more with a whole suite's workers loading at once."""


def wait_ready() -> None:
    """Wait until the zygote has loaded (or died), called before each test: a launcher
    that comes during the load waits for it, and that wait, 10-30 s on a busy machine,
    would count against the test's own timeouts (a fake server's 10 s ``startup_timeout``
    expired so). A zygote still loading after :data:`LOAD_GUARD` is hung: it is killed
    (launchers then run the real command) and the test fails with its log."""
    proc = _State.proc
    if proc is None or _State.ready == proc.pid:
        return
    mark = f"zygote {proc.pid}: ready in"
    deadline = time.monotonic() + LOAD_GUARD
    while proc.poll() is None and mark not in log():
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(30)
            raise RuntimeError(f"tests/zygote: not loaded in {LOAD_GUARD:g} s; its log:\n"
                               f"{log()}")
        time.sleep(0.05)
    _State.ready = proc.pid


def stop() -> None:
    """Close the zygote's stdin (it then exits once its children have), then make sure."""
    proc, _State.proc = _State.proc, None
    os.environ.pop(SOCKET_VAR, None)
    if proc is None:
        return
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)
    for path in (SOCKET, LOG):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def running() -> bool:
    """Whether this process's zygote runs (it may still be loading)."""
    return _State.proc is not None and _State.proc.poll() is None


def log() -> str:
    """What the zygote wrote (its readiness, refusals, errors)."""
    try:
        return LOG.read_text(errors="replace")
    except FileNotFoundError:
        return ""
