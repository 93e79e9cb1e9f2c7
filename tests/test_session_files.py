"""Where conversations are kept, through the real entry points: every file and directory
that holds one is the user's alone (created so, not chmod-ed after), and the offline demo's
conversations are listed, marked, but never continued by ``-c`` or a bare ``--resume``."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.ui.kit import SIZE, finish, ready, send, until
from tests.zygote import TUI_AGENT, module
from tui_agent.cli import build_parser, startup
from tui_agent.config import paths
from tui_agent.core.session import SessionWriter, load
from tui_agent.demo import DEMO_SERVER


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
def test_sessions_results_metrics_and_exports_are_private(tmp_path: Path,
                                                          fake_llm: FakeLLM) -> None:
    """Under the usual umask (022, which makes files readable by everyone), ``run`` with a
    tool whose whole result is kept beside the session, then ``export``: the sessions and
    results directories are 0700, every file in them and the export 0600; so are the
    servers' logs and their directory."""
    conf = tmp_path / "c.toml"
    command, *argv = module("tests.fakes.mcp_server")
    conf.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake_llm.base_url}"\n'
                    "[agent]\nmax_tool_output = 500\n"
                    f'[servers.b]\ncommand = {json.dumps(command)}\n'
                    f'args = {json.dumps(argv)}\ncwd = "{ROOT}"\n'
                    'auto = ["big"]\n'
                    f'env = {{ TUI_AGENT_TEST_TAG = "{os.environ["TUI_AGENT_TEST_TAG"]}" }}\n',
                    encoding="utf-8")
    fake_llm.push(Reply(tool_calls=[FakeToolCall("b__big", {"size": 50_000}, id="big1")]),
                  Reply(text="kept"))
    env = {**os.environ, **tagged_env(), "PYTHONPATH": str(ROOT)}

    def tui_agent(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*TUI_AGENT, *args], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120, umask=0o022,
                              stdin=subprocess.DEVNULL)

    done = tui_agent("run", "--config", str(conf), "a big result please")
    assert done.returncode == 0, done.stderr
    store = paths.sessions_dir()
    session = next(store.glob("*.jsonl"))
    results = session.with_suffix(".results")
    assert (mode(store), mode(session), mode(results)) == (0o700, 0o600, 0o700)
    kept = list(results.iterdir())
    assert [p.name for p in kept] == ["big1.txt"] and mode(kept[0]) == 0o600
    assert [mode(p) for p in store.glob("*.metrics.json")] == [0o600]
    logs = paths.state_dir() / "logs"  # a server's stderr may hold what it was given
    assert (mode(logs), [mode(p) for p in logs.glob("*.log")]) == (0o700, [0o600])
    out = tmp_path / "conversation.md"
    exported = tui_agent("export", session.stem, "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    assert mode(out) == 0o600 and "a big result please" in out.read_text(encoding="utf-8")


def test_a_session_file_from_before_is_made_private_when_continued(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text('{"kind":"meta","version":1,"id":"old"}\n', encoding="utf-8")
    path.chmod(0o644)
    SessionWriter.resume(load(path)).close()
    assert mode(path) == 0o600


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command (its own process: it owns its event loop and signals)."""
    return subprocess.run([*TUI_AGENT, *args], cwd=ROOT, text=True,
                          env={**os.environ, **tagged_env(), "PYTHONPATH": str(ROOT)},
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.slow
@pytest.mark.anyio
async def test_continue_after_the_demo_never_picks_the_demo(fake_llm: FakeLLM) -> None:
    """A real conversation (``run``), then the demo in the app as ``tui-agent --demo``
    starts it: ``sessions`` lists the demo's conversation marked ``(demo)``, and the app's
    ``-c`` and ``run -c`` go on with the real one; with only the demo's left, ``-c`` says
    so and sends nothing."""
    from tui_agent.ui.app import AgentApp
    from tui_agent.ui.screens.approval import ApprovalScreen

    base = ["run", "--model", "openai/fake-model", "--api-base", fake_llm.base_url]
    fake_llm.push(Reply(text="a real answer"))
    assert cli(*base, "a real question").returncode == 0
    app = AgentApp(startup(build_parser().parse_args(["--demo"])))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        # Without the notes server's tools the tour never calls save_note: on a busy machine
        # its first start (a fresh Python importing the MCP SDK) can overrun its 10 s
        # startup_timeout, and the hub starts it again.
        hub = app.backend.hub
        assert hub is not None
        await until(pilot, lambda: bool(hub.tools_of(DEMO_SERVER)), timeout=90,
                    what="the demo's notes server")
        await send(pilot, app, "hello demo")
        # The tour streams 169 pieces 20 ms apart and lets the text be read for 2.5 s before
        # it calls save_note: 6 s on a quiet machine, 16 s at load 12 (every piece is a
        # render of the transcript). The wait only guards against a hang.
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=90,
                    what="save_note")
        await pilot.press("n")
        await until(pilot, lambda: app.turns_ended == 1, timeout=60)
        demo = app.backend.agent.session
        assert demo is not None
        await finish(app)
    assert load(demo.path).meta["demo"] is True
    listed = cli("sessions").stdout.splitlines()
    assert listed[0].startswith(demo.id) and listed[0].endswith("(demo) hello demo")
    assert listed[1].endswith("  a real question")
    app = AgentApp(startup(build_parser().parse_args(
        ["-c", "--model", "openai/fake-model", "--api-base", fake_llm.base_url])))
    async with app.run_test(size=SIZE) as pilot:  # the app's -c: the real one too
        await until(pilot, lambda: getattr(app, "backend", None) is not None
                    and app.backend.resumed is not None, timeout=60,
                    what="the resumed conversation")
        assert app.backend.resumed is not None and not app.backend.resumed.demo
        assert app.backend.resumed.title() == "a real question"
        await finish(app)
    fake_llm.push(Reply(text="going on"))
    going_on = cli(*base, "-c", "and then?")
    assert going_on.returncode == 0, going_on.stderr
    sent = json.dumps(fake_llm.requests[-1]["messages"])
    assert "a real question" in sent and "hello demo" not in sent
    for path in paths.sessions_dir().glob("*.jsonl"):
        if path != demo.path:
            path.unlink()
    alone = cli(*base, "-c", "again?")
    assert alone.returncode == 2
    assert "no conversation to resume" in alone.stderr and "but the demo's" in alone.stderr
    assert len(fake_llm.requests) == 2
