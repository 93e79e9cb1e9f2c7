"""Logging in to an OAuth-protected MCP server (tests/fakes/oauth_server.py, the SDK's own
server side) as a user does: ``tui-agent login`` with a browser (a stand-in set as
``$BROWSER``), ``servers`` showing who is logged in, tokens renewed silently, a revoked
login asking for a new one (without a terminal: said, not waited for), ``logout``, a
static header refused by name, and no token anywhere but the token store."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import free_port, http_server
from tests.zygote import TUI_AGENT, module

if TYPE_CHECKING:
    from tui_agent.tools.hub import Hub

pytestmark = pytest.mark.slow


@contextmanager
def guarded(*args: str, port: int | None = None) -> Iterator[str]:
    """The OAuth-protected server on ``port`` (default: a free loopback port); its MCP
    URL."""
    port = port or free_port()
    command = module("tests.fakes.oauth_server", "--port", str(port), *args)
    with http_server(command, port, {"PYTHONPATH": str(ROOT)}, "/mcp") as url:
        yield url


def config(tmp_path: Path, url: str, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[servers.guarded]\nurl = "{url}"\n{extra}', encoding="utf-8")
    return path


def tui_agent(*args: str, browser_log: Path | None = None, stdin: str = "",
              timeout: float = 90, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    """The real command, its output captured (so: no terminal), with the stand-in browser."""
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "BROWSER": f"{sys.executable} -m tests.fakes.browser %s", **(env or {})}
    if browser_log is not None:
        env["FAKE_BROWSER_LOG"] = str(browser_log)
    return subprocess.run([*TUI_AGENT, *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def use_browser(monkeypatch: Any, command: str) -> None:
    """``$BROWSER`` for the app in this process: ``webbrowser`` reads it once per process,
    so its registry is made anew (with the variable as set now)."""
    import webbrowser

    monkeypatch.setenv("BROWSER", command)
    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})


def token_file() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "tui-agent" / "oauth-tokens.json"


@asynccontextmanager
async def waiting_for_login(url: str, tmp_path: Path) -> AsyncIterator[Hub]:
    """The chat app's hub, with its logins, started on the guarded server at ``url``, which
    failed for want of a login. One failure opens the circuit: nothing retries by itself,
    a reconnect is what brings the server back."""
    from tui_agent.config.models import ServerConfig
    from tui_agent.tools.hub import Hub
    from tui_agent.wiring.build import open_logins

    logins = open_logins(None)
    server = ServerConfig(url=url, transport="http", max_attempts=1, circuit_cooldown=300)
    async with Hub({"guarded": server}, log_dir=tmp_path / "logs",
                   client_side=logins.client_side) as hub:
        await hub.wait_all()
        status = hub.statuses()[0]
        assert status.state == "failed" and "needs login" in (status.last_error or ""), status
        yield hub


def test_login_keeps_the_tokens_privately_and_servers_says_who(tmp_path: Path) -> None:
    log = tmp_path / "browser.log"
    with guarded() as url:
        conf = config(tmp_path, url)
        done = tui_agent("login", "guarded", "--config", str(conf), browser_log=log)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("logged in to guarded: logged in as ")
        assert "scope mcp" in done.stdout
        # The link is shown as well, for a browser elsewhere (an SSH session).
        assert "log in to guarded in your browser" in done.stderr
        shown = log.read_text().splitlines()
        assert len(shown) == 1 and shown[0] in done.stderr
        assert "code_challenge_method=S256" in shown[0] and "state=" in shown[0]
        assert stat.S_IMODE(token_file().stat().st_mode) == 0o600
        report = tui_agent("servers", "--config", str(conf), browser_log=log)
        assert report.returncode == 0, report.stdout + report.stderr
        assert "guarded  connected  http  2 tools" in report.stdout
        assert "  login: logged in as " in report.stdout
        assert len(log.read_text().splitlines()) == 1  # no second login


def test_an_expired_token_is_renewed_without_a_login(tmp_path: Path) -> None:
    log = tmp_path / "browser.log"
    # The login's token lives 1 s, so it has expired when `servers` starts; the renewed one
    # lives an hour, so a loaded machine cannot let it expire between its requests too.
    with guarded("--token-ttl", "1", "--refreshed-ttl", "3600") as url:
        conf = config(tmp_path, url)
        assert tui_agent("login", "guarded", "--config", str(conf),
                         browser_log=log).returncode == 0
        before = json.loads(token_file().read_text())
        report = tui_agent("servers", "--config", str(conf), browser_log=log)
        assert "guarded  connected" in report.stdout, report.stdout + report.stderr
        assert len(log.read_text().splitlines()) == 1
        assert json.loads(token_file().read_text()) != before  # the renewed tokens are kept


def test_a_revoked_login_is_reported_without_a_terminal_and_logout_forgets(
        tmp_path: Path) -> None:
    with guarded() as url:
        conf = config(tmp_path, url)
        assert tui_agent("login", "guarded", "--config", str(conf)).returncode == 0
    with guarded() as url:  # a new server process: every token it issued is gone
        conf = config(tmp_path, url)
        report = tui_agent("servers", "--config", str(conf))
        assert report.returncode == 1
        assert "error: needs login: run 'tui-agent login guarded'" in report.stdout
        assert "  login: not logged in" in report.stdout
        assert "log in to guarded in your browser" not in report.stderr  # nobody to show
        log = tmp_path / "browser.log"  # logging in again: one login, not a loop of them
        again = tui_agent("login", "guarded", "--config", str(conf), browser_log=log)
        assert again.returncode == 0 and len(log.read_text().splitlines()) == 1, again.stderr
    out = tui_agent("logout", "guarded", "--config", str(conf))
    assert (out.returncode, out.stdout) == (0, "logged out of guarded\n")
    assert tui_agent("logout", "guarded", "--config", str(conf)).stdout == \
        "not logged in to guarded\n"


def test_with_a_keyring_the_tokens_live_there(tmp_path: Path) -> None:
    """A keyring backend chosen the keyring library's way (``PYTHON_KEYRING_BACKEND``; here
    keyrings.alt's file backend, as no desktop Secret Service runs on these machines): the
    login is kept in it under ``tui-agent``, no token file is written, the next run finds
    the login there, and logout takes it out."""
    from keyrings.alt.file import PlaintextKeyring

    from tui_agent.tools.auth.storage import KeyringVault, TokenStore

    keyring_home = tmp_path / "data"
    backend = PlaintextKeyring()
    backend.file_path = str(keyring_home / "python_keyring" / "keyring_pass.cfg")
    kept = TokenStore(KeyringVault(backend))
    env = {"PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring",
           "XDG_DATA_HOME": str(keyring_home)}
    log = tmp_path / "browser.log"
    with guarded() as url:
        conf = config(tmp_path, url)
        done = tui_agent("login", "guarded", "--config", str(conf), browser_log=log, env=env)
        assert done.returncode == 0, done.stderr
        login = kept.status(url, None)
        assert login is not None and login.scope == "mcp"
        assert not token_file().exists()
        report = tui_agent("servers", "--config", str(conf), browser_log=log, env=env)
        assert "guarded  connected" in report.stdout, report.stdout + report.stderr
        assert "  login: logged in as " in report.stdout
        assert len(log.read_text().splitlines()) == 1
    out = tui_agent("logout", "guarded", "--config", str(conf), env=env)
    assert out.stdout == "logged out of guarded\n"
    assert kept.status(url, None) is None


def test_no_token_leaves_the_token_store(tmp_path: Path, fake_llm: FakeLLM) -> None:
    """A whole turn that calls the server's tools, one of which echoes the token it got:
    the access and refresh tokens are in the token store and nowhere else the app wrote
    (session, logs, metrics, output) or sent (the model provider), masked as every other
    secret."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("guarded__whoami", {}, id="w1"),
                                    FakeToolCall("guarded__echo_auth", {}, id="e1")]),
                  Reply(text="done"))
    with guarded() as url:
        conf = config(tmp_path, url, 'auto = ["whoami", "echo_auth"]\n')
        assert tui_agent("login", "guarded", "--config", str(conf)).returncode == 0
        turn = tui_agent("run", "--config", str(conf), "--model", "openai/fake-model",
                         "--api-base", fake_llm.base_url, "--output", "jsonl", "who am I?")
    assert turn.returncode == 0, turn.stderr
    results = [json.loads(line) for line in turn.stdout.splitlines()]
    assert any(e["type"] == "tool_result" and " mcp" in e["text"] for e in results)
    assert any(e["type"] == "tool_result" and e["text"] == "you sent Bearer ***"
               for e in results), turn.stdout
    record = next(iter(json.loads(token_file().read_text()).values()))
    tokens = json.loads(record)["tokens"]
    secrets = [tokens["access_token"], tokens["refresh_token"]]
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != token_file()]
    assert any(p.suffix == ".jsonl" for p in written)  # the session is among them
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not any(s in text for s in secrets), path
    assert not any(s in turn.stdout + turn.stderr for s in secrets)
    sent = json.dumps(fake_llm.requests)  # nor does the model provider get them
    assert not any(s in sent for s in secrets)
    assert fake_llm.requests[1]["messages"][-1]["content"] == "you sent Bearer ***"


def test_what_cannot_log_in_is_named(tmp_path: Path) -> None:
    with guarded() as url:
        static = config(tmp_path, url, 'headers = { Authorization = "Bearer wrong-token" }\n')
        report = tui_agent("servers", "--config", str(static))
        assert "refused the Authorization header in its config (HTTP 401)" in report.stdout
        bad_key = config(tmp_path, url, '[servers.guarded.oauth]\ngrant = "client_credentials"'
                         '\nclient_id = "svc"\nprivate_key_pem = "not a key"\n')
        report = tui_agent("servers", "--config", str(bad_key))
        assert "private_key_pem is not a PEM private key" in report.stdout, report.stdout
    unfinished = config(tmp_path, "http://127.0.0.1:9/mcp",
                        '[servers.guarded.oauth]\ngrant = "client_credentials"\n')
    out = tui_agent("servers", "--config", str(unfinished))
    assert out.returncode == 2
    assert "grant 'client_credentials' needs client_id" in out.stderr
    assert f"{unfinished}" in out.stderr and "line 3" in out.stderr
    local = tmp_path / "local.toml"
    local.write_text('[servers.local]\ncommand = "true"\n', encoding="utf-8")
    out = tui_agent("login", "local", "--config", str(local))
    assert out.returncode == 2
    assert "local does not log in: it is a stdio server" in out.stderr
    out = tui_agent("login", "nope", "--config", str(local))
    assert "no server named 'nope' (the servers: local)" in out.stderr


@pytest.mark.anyio
async def test_a_server_waiting_for_a_login_connects_after_one_made_elsewhere(
        tmp_path: Path) -> None:
    """The chat app's way: its server says it needs a login; the user runs
    ``tui-agent login`` in a terminal, then reconnects the server, which finds the tokens."""
    import asyncio

    with guarded() as url:
        conf = config(tmp_path, url)
        async with waiting_for_login(url, tmp_path) as hub:
            done = await asyncio.to_thread(tui_agent, "login", "guarded", "--config", str(conf))
            assert done.returncode == 0, done.stderr
            hub.connections["guarded"].reconnect()
            for _ in range(300):
                if hub.statuses()[0].state == "connected":
                    break
                await asyncio.sleep(0.1)
            assert hub.statuses()[0].state == "connected", hub.statuses()[0].last_error
            whoami = next(s for s in hub.specs() if s.tool == "whoami")
            outcome = await hub.call(whoami, {})
            assert not outcome.is_error and outcome.text.endswith(" mcp")


@pytest.mark.anyio
async def test_the_servers_screen_logs_in_with_l(tmp_path: Path, monkeypatch: Any) -> None:
    """In the chat app a server that needs a login says so on the servers screen; ``l``
    opens its login page (the link also goes into the conversation) and the server
    connects when the login completes, while the app goes on."""
    from tests.ui.kit import SIZE, make_app, open_servers, ready, until
    from tui_agent.ui.widgets.messages import Note

    use_browser(monkeypatch, f"{sys.executable} -m tests.fakes.browser %s")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    with guarded() as url:
        app = make_app(config(tmp_path, url))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            screen = await open_servers(pilot, app)
            detail = str(screen.query_one("#detail").render())
            assert "needs login: run 'tui-agent login guarded'" in detail
            assert "login: not logged in (l logs in)" in detail
            await pilot.press("l")
            await until(pilot, lambda: app.backend.statuses()[0].state == "connected",
                        timeout=30, what="the login")
            await until(pilot, lambda: "login: logged in as" in
                        str(screen.query_one("#detail").render()), what="the login line")
            notes = [str(n.render()) for n in app.query(Note)]
            assert any(n.startswith(f"log in to guarded: {url.rsplit('/mcp', 1)[0]}/authorize?")
                       for n in notes), notes
            await pilot.press("escape")
            await app.shut_down(0)


@pytest.mark.anyio
async def test_a_login_nobody_finishes_is_cancelled_with_l(tmp_path: Path,
                                                            monkeypatch: Any) -> None:
    """A browser that never comes back (the person closed the tab): the servers screen says
    the login waits, ``l`` again gives it up, and the server says so; the app went on."""
    from tests.ui.kit import SIZE, make_app, open_servers, ready, until

    use_browser(monkeypatch, "true %s")  # opens nothing, and never approves
    with guarded() as url:
        app = make_app(config(tmp_path, url))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            screen = await open_servers(pilot, app)

            def detail() -> str:
                return str(screen.query_one("#detail").render())

            await pilot.press("l")
            await until(pilot, lambda: "login: logging in, waiting for the browser (l cancels)"
                        in detail(), what="the waiting login")
            await pilot.press("l")
            assert "the login to guarded is cancelled" in str(
                screen.query_one("#message").render())
            await until(pilot, lambda: "the login was cancelled" in
                        (app.backend.statuses()[0].last_error or ""), what="the cancel")
            assert app.backend.statuses()[0].state == "failed"
            await until(pilot, lambda: "login: not logged in (l logs in)" in detail())
            await pilot.press("escape")
            await app.shut_down(0)


def test_a_run_on_a_terminal_logs_in_by_itself_and_the_turn_waits(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """``tui-agent run`` with its stderr on a terminal: the server's login starts by itself
    (the link printed there, the page opened), and the turn waits for it, then uses the
    server's tool."""
    import pty

    fake_llm.push(Reply(tool_calls=[FakeToolCall("guarded__whoami", {}, id="w1")]),
                  Reply(text="all done"))
    log = tmp_path / "browser.log"
    with guarded() as url:
        conf = config(tmp_path, url, 'auto = ["whoami"]\n')
        master, slave = pty.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FAKE_BROWSER_LOG": str(log),
               "BROWSER": f"{sys.executable} -m tests.fakes.browser %s"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui_agent", "run", "--config", str(conf), "--model",
             "openai/fake-model", "--api-base", fake_llm.base_url, "--output", "jsonl",
             "who am I?"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
            env=env, cwd=ROOT, text=True)
        os.close(slave)
        try:
            out, _ = proc.communicate(timeout=240)  # litellm alone took 50 s at load 13
        finally:
            os.close(master)
    assert proc.returncode == 0, out
    assert len(log.read_text().splitlines()) == 1
    events = [json.loads(line) for line in out.splitlines()]
    results = [e for e in events if e["type"] == "tool_result"]
    assert results and results[0]["text"].endswith(" mcp") and not results[0]["is_error"]


@pytest.mark.anyio
async def test_a_login_whose_registered_port_is_taken_registers_anew(tmp_path: Path) -> None:
    """A server that needs a login registered a client on a free port; by the time the
    person logs in, another program listens there. The login registers a new client on
    another free port instead of failing with "cannot listen"."""
    import asyncio
    import re
    import socket

    from tui_agent.tools.auth.callback import CALLBACK_PATH

    def registered_ports() -> list[int]:
        text = token_file().read_text().replace("\\/", "/")
        return [int(p) for p in re.findall(rf"127\.0\.0\.1:(\d+){CALLBACK_PATH}", text)]

    with guarded() as url:
        conf = config(tmp_path, url)
        async with waiting_for_login(url, tmp_path):
            pass  # connecting registered a client on a free port for the login
        first = set(registered_ports())
        assert len(first) == 1, token_file().read_text()
        with socket.socket() as holder:  # another program on the registered port
            holder.bind(("127.0.0.1", first.pop()))
            holder.listen()
            done = await asyncio.to_thread(tui_agent, "login", "guarded", "--config", str(conf))
            assert done.returncode == 0, done.stderr
            assert "cannot listen" not in done.stderr
            now = registered_ports()
            assert len(now) == 1 and now[0] != holder.getsockname()[1], now
