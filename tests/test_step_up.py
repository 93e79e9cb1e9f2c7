"""A tool call the server refuses with ``403 insufficient_scope`` (a step-up: the token
holds ``mcp``, ``tools/call`` needs ``mcp:write`` too) in ``tui-agent run``, against the
OAuth fake (tests/fakes/oauth_server.py ``--call-scope``): with a login allowed
(``--login browser``, or a terminal) the wider login runs and the call goes again; without
one the call fails naming the scope and what to do, the server stays up, the kept login
stays, and ``tui-agent login`` then asks for the wider scope."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.fakes.relay import relay
from tests.reference import free_port
from tests.test_login import config, guarded, tui_agent
from tests.zygote import TUI_AGENT

pytestmark = pytest.mark.slow

NEEDS = "guarded needs more scope (mcp mcp:write) for whoami: run 'tui-agent login guarded'"


def turn(fake_llm: FakeLLM) -> None:
    """The model calls whoami (which needs the wider scope), then says it is done."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("guarded__whoami", {}, id="w1")]),
                  Reply(text="all done"))


def run(conf: Path, fake_llm: FakeLLM, log: Path, *flags: str
        ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, object]]]:
    done = tui_agent("run", "--config", str(conf), "--model", "openai/fake-model",
                     "--api-base", fake_llm.base_url, "--output", "jsonl", *flags, "who am I?",
                     browser_log=log)
    return done, [json.loads(line) for line in done.stdout.splitlines()]


def scopes_asked(log: Path) -> list[str]:
    return [parse_qs(urlsplit(url).query)["scope"][0] for url in log.read_text().splitlines()]


def test_without_a_login_the_call_names_the_scope_and_login_then_asks_for_it(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    log = tmp_path / "browser.log"
    with guarded("--call-scope", "mcp:write") as url:
        conf = config(tmp_path, url, 'auto = ["whoami"]\n')
        assert tui_agent("login", "guarded", "--config", str(conf),
                         browser_log=log).returncode == 0
        turn(fake_llm)
        done, events = run(conf, fake_llm, log)
        assert done.returncode == 0, done.stderr
        result = next(e for e in events if e["type"] == "tool_result")
        assert result["is_error"] and result["text"] == f"error: {NEEDS}", result
        assert "lost the connection" not in done.stdout + done.stderr
        assert scopes_asked(log) == ["mcp"]  # no browser for the step-up
        # The kept login was not thrown away; the next login asks for the wider scope, and
        # the call then works with no login at all.
        again = tui_agent("login", "guarded", "--config", str(conf), browser_log=log)
        assert again.returncode == 0 and "scope mcp mcp:write" in again.stdout, again.stderr
        assert scopes_asked(log) == ["mcp", "mcp mcp:write"]
        turn(fake_llm)
        done, events = run(conf, fake_llm, log, "--login", "never")
        result = next(e for e in events if e["type"] == "tool_result")
        assert not result["is_error"] and str(result["text"]).endswith(" mcp mcp:write")
        assert len(scopes_asked(log)) == 2


def test_login_browser_steps_up_without_a_terminal(tmp_path: Path, fake_llm: FakeLLM) -> None:
    log = tmp_path / "browser.log"
    with guarded("--call-scope", "mcp:write") as url:
        conf = config(tmp_path, url, 'auto = ["whoami"]\n')
        turn(fake_llm)
        done, events = run(conf, fake_llm, log, "--login", "browser")
    assert done.returncode == 0, done.stderr
    result = next(e for e in events if e["type"] == "tool_result")
    assert not result["is_error"] and str(result["text"]).endswith(" mcp mcp:write"), result
    assert scopes_asked(log) == ["mcp", "mcp mcp:write"]  # the login, then the step-up
    assert done.stderr.count("log in to guarded in your browser") == 2  # each link shown


def on_a_terminal(conf: Path, fake_llm: FakeLLM, log: Path, *flags: str) -> tuple[int, str]:
    """``run`` with its stderr on a pty (a person is there); its exit code and stdout."""
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAKE_BROWSER_LOG": str(log),
           "BROWSER": f"{sys.executable} -m tests.fakes.browser %s"}
    proc = subprocess.Popen(
        [*TUI_AGENT, "run", "--config", str(conf), "--model",
         "openai/fake-model", "--api-base", fake_llm.base_url, "--output", "jsonl", *flags,
         "who am I?"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
        env=env, cwd=ROOT, text=True)
    os.close(slave)
    try:
        out, _ = proc.communicate(timeout=90)
    finally:
        os.close(master)
    return proc.returncode, out


def test_on_a_terminal_the_step_up_runs_unless_login_never(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    log = tmp_path / "browser.log"
    with guarded("--call-scope", "mcp:write") as url:
        conf = config(tmp_path, url, 'auto = ["whoami"]\n')
        assert tui_agent("login", "guarded", "--config", str(conf),
                         browser_log=log).returncode == 0
        turn(fake_llm)
        code, out = on_a_terminal(conf, fake_llm, log, "--login", "never")
        results = [e for e in map(json.loads, out.splitlines()) if e["type"] == "tool_result"]
        assert code == 0 and results[0]["text"] == f"error: {NEEDS}", out
        assert scopes_asked(log) == ["mcp"]
        turn(fake_llm)
        code, out = on_a_terminal(conf, fake_llm, log)
        results = [e for e in map(json.loads, out.splitlines()) if e["type"] == "tool_result"]
        assert code == 0 and results[0]["text"].endswith(" mcp mcp:write"), out
        assert scopes_asked(log) == ["mcp", "mcp mcp:write"]


def test_the_call_waits_for_the_person_logging_in(tmp_path: Path, fake_llm: FakeLLM) -> None:
    """A person takes longer over the wider login than the call may take (``timeout = 2``,
    the page read for 4 s): the call's timer waits for them (the login has a time limit of
    its own), then the call goes again and answers."""
    log = tmp_path / "browser.log"
    with guarded("--call-scope", "mcp:write") as url:
        conf = config(tmp_path, url, 'auto = ["whoami"]\ntimeout = 2\n')
        assert tui_agent("login", "guarded", "--config", str(conf),
                         browser_log=log).returncode == 0
        turn(fake_llm)
        done = tui_agent("run", "--config", str(conf), "--model", "openai/fake-model",
                         "--api-base", fake_llm.base_url, "--output", "jsonl", "--login",
                         "browser", "who am I?", browser_log=log,
                         env={"FAKE_BROWSER_DELAY": "4"})
    events = [json.loads(line) for line in done.stdout.splitlines()]
    result = next(e for e in events if e["type"] == "tool_result")
    assert not result["is_error"] and str(result["text"]).endswith(" mcp mcp:write"), result
    assert scopes_asked(log) == ["mcp", "mcp mcp:write"]


FAILED = "guarded needs more scope (mcp mcp:write) for whoami, and the login for it failed: "


def test_a_wider_login_the_token_endpoint_refuses_is_named(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """The step-up's login runs, and the token endpoint refuses its code: the call fails
    naming that step in the authorization server's words, not as a lost connection; the
    wider scope is kept for the next login."""
    log = tmp_path / "browser.log"
    with guarded("--call-scope", "mcp:write", "--refuse-wider") as url:
        conf = config(tmp_path, url, 'auto = ["whoami"]\n')
        assert tui_agent("login", "guarded", "--config", str(conf),
                         browser_log=log).returncode == 0
        turn(fake_llm)
        done, events = run(conf, fake_llm, log, "--login", "browser")
        assert done.returncode == 0, done.stderr
        result = next(e for e in events if e["type"] == "tool_result")
        assert result["is_error"] and result["text"] == (
            f"error: {FAILED}the authorization server refused the authorization code "
            "(invalid_grant: authorization code does not exist): log in again (tui-agent "
            "login guarded)"), result
        assert "lost the connection" not in done.stdout + done.stderr
        assert scopes_asked(log) == ["mcp", "mcp mcp:write"]
        again = tui_agent("login", "guarded", "--config", str(conf), browser_log=log)
        assert scopes_asked(log)[-1] == "mcp mcp:write", again.stderr  # the wider scope kept


def test_an_authorization_server_down_during_a_step_up_is_named(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """The authorization server (on a port of its own) answered the first login and is
    down when the call asks for the wider scope: the call fails naming the step that could
    not be reached, not as a lost connection."""
    log = tmp_path / "browser.log"
    authority, port = free_port(), free_port()
    with guarded("--call-scope", "mcp:write", "--authority-port", str(authority),
                 port=port) as url:
        conf = config(tmp_path, url, 'auto = ["whoami"]\n')
        with relay(authority, port):
            assert tui_agent("login", "guarded", "--config", str(conf),
                             browser_log=log).returncode == 0
        turn(fake_llm)
        done, events = run(conf, fake_llm, log, "--login", "browser")
    assert done.returncode == 0, done.stderr
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["is_error"] and result["text"] == (
        f"error: {FAILED}could not reach the authorization server's metadata at "
        f"http://127.0.0.1:{authority}/.well-known/oauth-authorization-server (ConnectError: "
        "All connection attempts failed)"), result
    assert "lost the connection" not in done.stdout + done.stderr
    assert scopes_asked(log) == ["mcp"]


@pytest.mark.anyio
async def test_parallel_calls_each_get_their_own_answer(tmp_path: Path) -> None:
    """Two calls to one server at once: ``whoami`` is refused for scope (each 403 takes 3 s)
    and no login can run; ``late_error`` (sent once the refused step-up lets go of the
    login) gets an unrelated MCP error 1 s later, while the refused call's request is out
    once more. Each call is told its own failure (the refusal was one slot per server, and
    went to whichever error came first)."""
    from tests.test_login import token_file
    from tests.test_login_wait import hub_of
    from tui_agent.tools.auth.logins import Logins
    from tui_agent.tools.auth.storage import FileVault, TokenStore
    from tui_agent.tools.errors import ServerError

    with guarded("--call-scope", "mcp:write", "--refusal-delay", "3") as url:
        conf = config(tmp_path, url)
        assert (await anyio.to_thread.run_sync(
            lambda: tui_agent("login", "guarded", "--config", str(conf)))).returncode == 0
        logins = Logins(TokenStore(FileVault(token_file())), None)
        async with hub_of(url, tmp_path, logins) as hub:
            await hub.wait_all()
            conn = hub.connections["guarded"]

            async def failure(tool: str, **arguments: float) -> str:
                with pytest.raises(ServerError) as caught:
                    await conn.call(tool, arguments, retry_safe=False)
                return str(caught.value)

            refused, unrelated = await asyncio.gather(failure("whoami"),
                                                      failure("late_error", seconds=1))
    assert refused == NEEDS
    assert unrelated == ("server 'guarded' rejected the call of late_error: late and "
                         "unrelated (MCP error -32603)")
