"""Logging in from the chat app (``l`` on the servers screen) against the OAuth fake
(tests/fakes/oauth_server.py), told as it happens: ``l`` promises no browser; a browser
opens only when the server asks for a login, and the app says so then; how the login ended
is a notification and the screen's message, in ``tui-agent login``'s words, naming the
step that failed; the state and the login line agree (never ``connected`` beside ``not
logged in``); a successful login clears the old "needs login"; and a server that only
needs a login is no breaker trip."""

from __future__ import annotations

import asyncio
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.reference import free_port
from tests.test_login import config, guarded, tui_agent, use_browser
from tests.ui.kit import SIZE, make_app, notices, open_servers, ready, until
from tui_agent.ui.screens.servers import ServersScreen
from tui_agent.ui.widgets.messages import Note

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def detail(screen: ServersScreen) -> str:
    return str(screen.query_one("#detail").render())


def message(screen: ServersScreen) -> str:
    return str(screen.query_one("#message").render())


def notified(app: Any) -> list[str]:
    """The notifications raised so far. ``notify`` posts a message, so one made together
    with a screen's message line lands a moment after it: wait for it, do not assert at
    once."""
    return notices(app)


def browser(monkeypatch: Any, tmp_path: Path) -> Path:
    """The stand-in browser (it approves at once), logging each URL it was given."""
    log = tmp_path / "browser.log"
    use_browser(monkeypatch, f"{sys.executable} -m tests.fakes.browser %s")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("FAKE_BROWSER_LOG", str(log))
    return log


async def test_a_login_clears_needs_login_which_was_no_breaker_trip(
        tmp_path: Path, monkeypatch: Any) -> None:
    log = browser(monkeypatch, tmp_path)
    with guarded() as url:
        # One failure would open the circuit: a login due is not one.
        app = make_app(config(tmp_path, url, "max_attempts = 1\n"))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            screen = await open_servers(pilot, app)
            status = app.backend.statuses()[0]
            assert status.state == "failed" and status.circuit == "closed", status
            assert app.backend.stats()["servers"]["guarded"]["breaker_trips"] == 0
            assert "last error: needs login: run 'tui-agent login guarded'" in detail(screen)
            assert "paus" not in detail(screen)  # no pause (the breaker), no pause count
            await pilot.press("l")
            assert message(screen) == "logging in to guarded…"
            await until(pilot, lambda: app.backend.statuses()[0].state == "connected",
                        timeout=30, what="the login")
            await until(pilot, lambda: message(screen).startswith(
                "logged in to guarded: logged in as "), what="the outcome")
            assert "needs login" not in detail(screen)
            assert "login: logged in as " in detail(screen)
            await until(pilot, lambda: any(n.startswith("logged in to guarded: logged in as ")
                                           for n in notified(app)), what="the notification")
            assert len(log.read_text().splitlines()) == 1
            await app.action_quit()


async def test_after_a_logout_elsewhere_l_logs_in_for_real(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Logged in, connected; ``tui-agent logout`` in another shell: the screen does not
    show ``connected`` beside ``not logged in``, and ``l`` makes a real login (the page
    opens, as the app then says), not a reconnect on the tokens it still held."""
    log = browser(monkeypatch, tmp_path)
    with guarded() as url:
        conf = config(tmp_path, url)
        assert tui_agent("login", "guarded", "--config", str(conf),
                         browser_log=log).returncode == 0
        app = make_app(conf)
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            screen = await open_servers(pilot, app)
            assert app.backend.statuses()[0].state == "connected"
            out = await asyncio.to_thread(tui_agent, "logout", "guarded", "--config", str(conf))
            assert out.stdout == "logged out of guarded\n"
            screen.refresh_data()
            assert "login: not logged in" not in detail(screen), detail(screen)
            assert "login: logged out, but this connection keeps its login" in detail(screen)
            await pilot.press("l")
            assert "browser" not in message(screen)
            await until(pilot, lambda: message(screen).startswith("logged in to guarded: "),
                        timeout=30, what="the outcome")
            assert len(log.read_text().splitlines()) == 2  # a new login, in the browser
            assert any(str(n.render()).startswith("log in to guarded: ")
                       for n in app.query(Note))
            await until(pilot, lambda: "log in to guarded in your browser" in notified(app),
                        what="the notification")
            assert "login: logged in as " in detail(screen)
            await app.action_quit()


async def test_an_authorization_server_that_is_down_is_named_not_a_browser(
        tmp_path: Path, monkeypatch: Any) -> None:
    log = browser(monkeypatch, tmp_path)
    gone = free_port()
    said = ("could not log in to guarded: could not reach the authorization server's "
            f"metadata at http://127.0.0.1:{gone}/.well-known/oauth-authorization-server "
            "(ConnectError: All connection attempts failed)")
    with guarded("--authority-port", str(gone)) as url:
        app = make_app(config(tmp_path, url, "max_attempts = 1\n"))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            screen = await open_servers(pilot, app)
            assert app.backend.statuses()[0].circuit == "closed"
            await pilot.press("l")
            assert "browser" not in message(screen)
            await until(pilot, lambda: message(screen) == said, timeout=30, what="the outcome")
            await until(pilot, lambda: said in notified(app), what="the notification")
            status = app.backend.statuses()[0]
            assert status.state == "failed" and status.circuit == "closed"
            assert "login: not logged in (l logs in)" in detail(screen)
            assert app.backend.stats()["servers"]["guarded"]["breaker_trips"] == 0
            assert not log.exists()  # no page was shown: there was none to show
            await app.action_quit()


async def test_l_leaves_no_browser_allowed_once_its_start_is_over(
        tmp_path: Path, monkeypatch: Any) -> None:
    """``l`` on a server whose kept login still works reconnects with no page. Later the
    authorization server has forgotten that login (it restarted: every token it issued is
    gone), and the next start needs a new one: the app opens no browser by itself, it says
    the server needs a login. (Without the fix the ``l`` of long ago still allowed one.)"""
    log = browser(monkeypatch, tmp_path)
    port = free_port()
    with ExitStack() as server:
        conf = config(tmp_path, server.enter_context(guarded(port=port)))
        assert tui_agent("login", "guarded", "--config", str(conf),
                         browser_log=log).returncode == 0
        app = make_app(conf)
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            screen = await open_servers(pilot, app)
            await pilot.press("l")
            await until(pilot, lambda: message(screen).startswith(
                "logged in to guarded: logged in as "), timeout=30, what="the outcome")
            assert len(log.read_text().splitlines()) == 1  # the kept login did
            await asyncio.to_thread(server.close)  # revoked: a new server process
            await asyncio.to_thread(server.enter_context, guarded(port=port))
            await pilot.press("r")
            await until(pilot, lambda: app.backend.statuses()[0].state == "failed",
                        timeout=30, what="the start that needs a login")
            assert "needs login: run 'tui-agent login guarded'" in \
                str(app.backend.statuses()[0].last_error)
            assert len(log.read_text().splitlines()) == 1, "a browser opened by itself"
            await app.action_quit()
