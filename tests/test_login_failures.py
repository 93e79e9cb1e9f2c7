"""A login that fails says at which step, what the authorization server said, and what to
do: an authorization server that does not answer, a client it does not accept
(``invalid_client``), a code it refuses (``invalid_grant``), scopes it will not grant
(``invalid_scope``). The server is the SDK's own (tests/fakes/oauth_server.py), made to
misbehave by its flags; the login is the real ``tui-agent login`` with a stand-in browser."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import ROOT
from tests.reference import free_port, http_server
from tests.test_login import config, guarded, tui_agent
from tests.zygote import module

pytestmark = pytest.mark.slow


def login(tmp_path: Path, server_args: list[str], oauth: str = "") -> tuple[int, str, list[str]]:
    """``tui-agent login guarded`` against the server started with ``server_args``: its exit
    code, the line that says why, and the URLs the browser was given."""
    log = tmp_path / "browser.log"
    with guarded(*server_args) as url:
        conf = config(tmp_path, url, f"[servers.guarded.oauth]\n{oauth}" if oauth else "")
        done = tui_agent("login", "guarded", "--config", str(conf), browser_log=log)
    said = [line for line in done.stderr.splitlines() if "could not log in" in line]
    assert "Traceback" not in done.stderr, done.stderr
    opened = log.read_text().splitlines() if log.exists() else []
    return done.returncode, (said or [done.stdout])[0], opened


def test_an_authorization_server_that_does_not_answer_is_named(tmp_path: Path) -> None:
    gone = free_port()
    code, said, opened = login(tmp_path, ["--authority-port", str(gone)])
    assert code == 1 and not opened
    assert said == (
        "tui-agent: could not log in to guarded: could not reach the authorization server's "
        f"metadata at http://127.0.0.1:{gone}/.well-known/oauth-authorization-server "
        "(ConnectError: All connection attempts failed)")


def test_a_client_the_server_does_not_accept_points_at_its_settings(tmp_path: Path) -> None:
    port = free_port()
    code, said, _ = login(tmp_path, ["--client", "me:right", "--callback-port", str(port)],
                          f'client_id = "me"\nclient_secret = "wrong"\ncallback_port = {port}\n')
    assert code == 1
    assert said.endswith(
        "the authorization server does not accept the client 'me' (invalid_client: Invalid "
        "client_secret): check client_id and client_secret in [servers.guarded.oauth]")
    assert "wrong" not in said.replace("'me'", "")  # the secret is never told


def test_a_refused_code_asks_for_a_new_login(tmp_path: Path) -> None:
    code, said, opened = login(tmp_path, ["--lose-codes"])
    assert code == 1 and len(opened) == 1
    assert said.endswith(
        "the authorization server refused the authorization code (invalid_grant: authorization "
        "code does not exist): log in again (tui-agent login guarded)")


def test_configured_scopes_are_asked_and_a_refusal_names_them(tmp_path: Path) -> None:
    """The user's ``scopes`` win over what discovery picks (the server's challenge says
    ``mcp``); scopes the server will not grant come back through the browser, in words."""
    port = free_port()
    code, said, opened = login(tmp_path, ["--client", "me:right", "--callback-port", str(port)],
                               f'client_id = "me"\nclient_secret = "right"\n'
                               f'callback_port = {port}\nscopes = ["admin"]\n')
    assert code == 1
    assert parse_qs(urlsplit(opened[0]).query)["scope"] == ["admin"]
    assert said.endswith(
        "the authorization server refused the scopes asked (invalid_scope: Client was not "
        "registered with scope admin): check scopes in [servers.guarded.oauth] (asked: admin)")


def test_a_pre_registered_client_logs_in_with_its_secret(tmp_path: Path) -> None:
    port = free_port()
    code, said, opened = login(tmp_path, ["--client", "me:right", "--callback-port", str(port)],
                               f'client_id = "me"\nclient_secret = "right"\n'
                               f'callback_port = {port}\n')
    assert code == 0, said
    query = parse_qs(urlsplit(opened[0]).query)
    assert query["client_id"] == ["me"]
    assert query["redirect_uri"] == [f"http://127.0.0.1:{port}/callback"]
    assert said.startswith("logged in to guarded: logged in as me until ")


def test_a_server_that_asks_for_no_login_is_said_to_need_none(tmp_path: Path) -> None:
    port = free_port()
    command = module("tests.fakes.mcp_server", "--transport", "http", "--port", str(port))
    with http_server(command, port, {"PYTHONPATH": str(ROOT)}, "/mcp") as url:
        done = tui_agent("login", "guarded", "--config", str(config(tmp_path, url)))
        report = tui_agent("servers", "--config", str(config(tmp_path, url)))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "guarded needs no login: it connected without asking for one\n"
    assert "  login: none needed\n" in report.stdout, report.stdout
