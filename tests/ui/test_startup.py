"""How ``tui-agent`` starts: the first frame is drawn before the config is validated
(``Startup``), and what happens to a prompt, a quit or a bad config in that window.
Through the pilot, and once through the real command on a real terminal."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_terminal import read_until
from tests.ui.kit import SIZE, finish, turn, until, write_config
from tests.waits import wait_pid
from tui_agent.ui.app import AgentApp
from tui_agent.ui.startup import Startup
from tui_agent.ui.themes import first_themes
from tui_agent.ui.widgets.messages import AssistantMessage

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

BAD = """# a typo in a key, on line 3
[model]
nmae = "openai/gpt-4o-mini"
"""


def test_the_first_frame_needs_no_config_validation() -> None:
    """What the command imports before its first frame: no pydantic (the config models),
    no litellm, no MCP. Loading the config then brings pydantic in."""
    code = """if True:
        import sys
        from tui_agent.cli import build_parser, startup
        from tui_agent.ui.app import AgentApp
        start = startup(build_parser().parse_args([]))
        app = AgentApp(start)
        start.theme()
        print(sorted(m for m in ("pydantic", "litellm", "mcp") if m in sys.modules))
        start.options()
        print(sorted(m for m in ("pydantic", "litellm", "mcp") if m in sys.modules))
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out.split("\n")[:2] == ["[]", "['pydantic']"]


async def test_the_config_loads_after_the_first_frame(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """The theme is there from the first frame; the flags apply over the file; a prompt
    sent at once waits for the config instead of failing."""
    fake_llm.push(Reply(text="hello from the flag's model"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, model=None,
                          extra='\n[ui]\ntheme = "tui-agent-day"  # the light one\n')
    app = AgentApp(Startup(config=config, model="openai/fake-model"))
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "tui-agent-day"
        await turn(pilot, app, "hi")
        assert app.loaded.is_set()
        assert app.status.model == "openai/fake-model"
        assert [r.source for r in app.transcript.query(AssistantMessage)] == [
            "hello from the flag's model"]
        await finish(app)
    assert app.return_code == 0


def test_the_first_frame_reads_only_the_shipped_theme_it_is_drawn_in(tmp_path: Path) -> None:
    """Before the first frame only the theme in use is read when it is a shipped one; a
    user who keeps theme files (one may redefine a shipped theme) has them all read then."""
    themes, problems, left = first_themes("tui-agent-day", tmp_path / "themes")
    assert ([t.name for t in themes], problems, left) == (["tui-agent-day"], [], True)
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "mine.toml").write_text(
        'name = "tui-agent-day"\nprimary = "#ff0000"\n', encoding="utf-8")
    themes, problems, left = first_themes("tui-agent-day", tmp_path / "themes")
    assert not left and problems == []
    assert [t.primary for t in themes if t.name == "tui-agent-day"][-1] == "#ff0000"
    themes, _, left = first_themes("mine", tmp_path / "nothing")  # not shipped: read all
    assert not left and {"tui-agent-day", "tui-agent-night", "tui-agent-ember"} <= {
        t.name for t in themes}


async def test_every_shipped_theme_is_there_once_the_config_is_loaded(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url)
    app = AgentApp(Startup(config=config))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app.loaded.is_set)
        assert app.theme == "tui-agent-night"
        assert {"tui-agent-day", "tui-agent-night", "tui-agent-ember"} <= set(
            app.available_themes)
        await finish(app)


async def test_a_bad_config_ends_the_app_with_its_error(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(BAD, encoding="utf-8")
    app = AgentApp(Startup(config=config))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.return_code is not None, what="the app to end")
    assert app.return_code == 2
    assert app.config_error is not None
    assert str(config) in app.config_error and "line 3" in app.config_error
    assert "nmae" in app.config_error and "did you mean 'name'" in app.config_error


async def test_quit_while_the_config_loads(tmp_path: Path) -> None:
    """Ctrl+Q at once: the app ends cleanly (run_test raises what the app raised)."""
    app = AgentApp(Startup(config=write_config(tmp_path / "c.toml")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        await until(pilot, lambda: app.return_code is not None, what="the app to end")
    assert app.return_code == 0 and app.config_error is None


def run_on_a_terminal(args: list[str], keys: bytes = b"", wait_for: bytes = b"") -> tuple[
        int, bytes]:
    """``tui-agent ARGS`` on a fresh pty: type ``keys`` once ``wait_for`` is on screen;
    the exit code and everything written."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", COLUMNS="100",
                          LINES="30")
        os.execv(sys.executable, [sys.executable, "-m", "tui_agent", *args])
    seen = b""
    try:
        if wait_for:
            seen = read_until(fd, wait_for, timeout=30)
            time.sleep(0.3)
            os.write(fd, keys)
        seen += _drain(fd, pid, timeout=30)
        status = wait_pid(pid, 60)
    finally:
        os.close(fd)
    return os.waitstatus_to_exitcode(status), seen


def _drain(fd: int, pid: int, timeout: float) -> bytes:
    """Everything the child writes until it closes the terminal; a child still running
    after ``timeout`` is killed and fails the test."""
    seen = b""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([fd], [], [], left)[0]:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return seen
        if not chunk:
            return seen
        seen += chunk
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"the app was still running after {timeout} s: {seen[-300:]!r}")


def test_the_command_reports_a_bad_config_after_restoring_the_terminal(
        tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(BAD, encoding="utf-8")
    code, seen = run_on_a_terminal(["--config", str(config)])
    assert code == 2
    tail = seen.rsplit(b"\x1b[?1049l", 1)[-1]  # after the app left the alternate screen
    assert b"tui-agent: " in tail and b"line 3" in tail and b"nmae" in tail
    assert b"Traceback" not in seen


def test_the_command_starts_and_quits(tmp_path: Path) -> None:
    code, seen = run_on_a_terminal(["--config", str(write_config(tmp_path / "c.toml"))],
                                   keys=b"\x11", wait_for=b"openai/fake-model")
    assert code == 0
    assert b"Traceback" not in seen
    assert seen.index(b"\x1b[?1049h") < seen.rindex(b"\x1b[?1049l")  # the terminal is back


def test_loading_the_config_runs_no_sandbox_check_on_the_event_loop(tmp_path: Path) -> None:
    """Building the backend on the UI's loop (after the config loads, and on each reload)
    neither runs bubblewrap's self-test (a process, up to 10 s) nor imports the shell's
    sandbox or the MCP SDK's server side (the SDK is imported in a thread): the built-in
    server finds out whether it has a sandbox itself. A fresh app in its own process, its
    config with the built-in server on, its main thread watched by an audit hook until the
    config is loaded and the servers are starting."""
    code = """if True:
        import asyncio, json, sys, threading, time
        from pathlib import Path
        on_loop = []
        def hook(event, args):
            if threading.current_thread() is not threading.main_thread():
                return
            if event == "subprocess.Popen" and "bwrap" in str(args[0]):
                on_loop.append(str(args[1]))
            elif event == "import" and args[0] in WATCHED:
                on_loop.append(args[0])
        WATCHED = ("mcp.server.mcpserver", "tui_agent.builtin.shell.sandbox")
        sys.addaudithook(hook)
        from tui_agent.ui.app import AgentApp
        from tui_agent.ui.startup import Startup
        async def main():
            app = AgentApp(Startup(config=Path(sys.argv[1])))
            async with app.run_test(size=(100, 32)) as pilot:
                await asyncio.wait_for(app.loaded.wait(), 60)
                deadline = time.monotonic() + 60
                while app.backend.hub is None and time.monotonic() < deadline:
                    await pilot.pause(0.05)
                print(json.dumps({"hub": app.backend.hub is not None, "on_loop": on_loop,
                                  "loaded": [m for m in WATCHED if m in sys.modules]}))
                app.exit()
        asyncio.run(main())
    """
    config = write_config(tmp_path / "c.toml", base_url="http://127.0.0.1:9/v1")
    env = {k: v for k, v in os.environ.items() if k != "TUI_AGENT_NO_BUILTIN"}
    done = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["hub"] and "mcp.server.mcpserver" in seen["loaded"], seen  # it got there
    assert seen["on_loop"] == [], f"on the UI's loop: {seen['on_loop']}"
