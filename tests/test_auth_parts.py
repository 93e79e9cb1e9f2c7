"""The parts of MCP authorization that are ours (the SDK's providers do the protocol):
the token store (the SDK's ``TokenStorage`` over the OS keyring or a 0600 file) and the
loopback listener that ends a browser login."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import stat
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import keyring.errors
import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from tui_agent.tools.auth.callback import LoginError, LoopbackCallback
from tui_agent.tools.auth.storage import (
    FileVault,
    KeyringVault,
    TokenStore,
    usable_keyring,
)

pytestmark = pytest.mark.anyio
SERVER = "https://mcp.example.test/mcp"
SECRET = "at-5ecret-value"


class MemoryKeyring:
    """A keyring backend in memory, with the ``keyring`` package's backend methods and
    errors. Not a subclass of ``keyring.backend.KeyringBackend``: those register
    themselves, and keyring would then pick this one for every later test."""

    priority: float = 1

    def __init__(self) -> None:
        self.kept: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.kept.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.kept[service, username] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.kept.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError("not found")


def client_info() -> OAuthClientInformationFull:
    return OAuthClientInformationFull(client_id="registered-123",
                                      redirect_uris=[AnyUrl("http://127.0.0.1:1/callback")])


async def test_the_file_store_round_trips_the_sdks_records_in_a_private_file(
        tmp_path: Path) -> None:
    store = TokenStore(FileVault(tmp_path / "state" / "oauth-tokens.json"))
    slot = store.slot(SERVER)
    assert await slot.get_tokens() is None and store.status(SERVER) is None
    await slot.set_client_info(client_info())
    await slot.set_tokens(OAuthToken(access_token=SECRET, expires_in=3600, scope="read",
                                     refresh_token="rt"))
    path = tmp_path / "state" / "oauth-tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = TokenStore(FileVault(path)).slot(SERVER)  # a later run reads what was kept
    tokens = await again.get_tokens()
    assert tokens is not None and tokens.access_token == SECRET
    info = await again.get_client_info()
    assert info is not None and info.client_id == "registered-123"
    login = store.status(SERVER)
    assert login is not None and login.client_id == "registered-123"
    assert login.scope == "read" and login.refreshable and not login.expired()
    assert login.expires_at is not None and login.expired(login.expires_at + 1)
    assert SECRET not in repr(login)
    assert store.forget(SERVER) and store.status(SERVER) is None
    assert not store.forget(SERVER)
    assert json.loads(path.read_text()) == {}


async def test_records_are_kept_per_server_and_client(tmp_path: Path) -> None:
    store = TokenStore(FileVault(tmp_path / "t.json"))
    await store.slot(SERVER).set_tokens(OAuthToken(access_token="dynamic"))
    await store.slot(SERVER, "preset").set_tokens(OAuthToken(access_token="preset"))
    await store.slot(SERVER + "/other").set_tokens(OAuthToken(access_token="other"))
    found = {(url, cid): (await store.slot(url, cid).get_tokens())
             for url, cid in ((SERVER, None), (SERVER, "preset"), (SERVER + "/other", None))}
    assert {k: v.access_token if v else None for k, v in found.items()} == {
        (SERVER, None): "dynamic", (SERVER, "preset"): "preset",
        (SERVER + "/other", None): "other"}
    store.forget(SERVER, "preset")
    assert (await store.slot(SERVER, "preset").get_tokens()) is None
    assert (await store.slot(SERVER).get_tokens()) is not None


async def test_the_keyring_keeps_the_record_when_it_has_a_backend(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    store = TokenStore(KeyringVault(backend))
    await store.slot(SERVER).set_tokens(OAuthToken(access_token=SECRET))
    assert [service for service, _ in backend.kept] == ["tui-agent"]
    assert SECRET in next(iter(backend.kept.values()))
    assert store.forget(SERVER) and backend.kept == {}
    assert not store.forget(SERVER)  # the keyring's "not found" is not an error


def test_without_a_working_keyring_the_default_store_is_the_file(tmp_path: Path,
                                                                  monkeypatch: Any) -> None:
    import keyring
    from keyring.backends import fail

    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())  # type: ignore[no-untyped-call]
    assert usable_keyring() is None
    store = TokenStore.default(tmp_path)
    assert isinstance(store.vault, FileVault) and store.vault.path == tmp_path / \
        "oauth-tokens.json"
    monkeypatch.setattr(keyring, "get_keyring", MemoryKeyring)
    assert isinstance(TokenStore.default(tmp_path).vault, KeyringVault)


def test_a_keyring_not_recommended_is_used_only_when_chosen(monkeypatch: Any) -> None:
    """keyrings.alt's file backends (priority below 1) are no safer than our own file:
    taken only when the user named one."""
    import keyring

    class Weak(MemoryKeyring):
        priority = 0.5

    monkeypatch.setattr(keyring, "get_keyring", Weak)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")
    assert usable_keyring() is None
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    assert isinstance(usable_keyring(), Weak)


def test_an_unreadable_file_is_as_if_logged_out(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("{not json")
    assert TokenStore(FileVault(path)).status(SERVER) is None


def visit(url: str) -> tuple[int, str]:
    """What a browser does with the redirect: GET it, read the page."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 (loopback)
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


async def test_the_listener_takes_the_redirect_and_answers_the_browser() -> None:
    async with LoopbackCallback(0, timeout=10) as callback:
        assert callback.port > 0
        assert callback.redirect_uri == f"http://127.0.0.1:{callback.port}/callback"
        waiting = asyncio.create_task(callback.wait("s1"))
        code, page = await asyncio.to_thread(
            visit, callback.redirect_uri + "?code=abc&state=s1&iss=https%3A%2F%2Fas.test")
        redirect = await waiting
    assert (code, "You can close this tab" in page) == (200, True)
    assert (redirect.code, redirect.iss) == ("abc", "https://as.test")
    with pytest.raises(OSError):  # closed: one login, one listener
        await asyncio.to_thread(visit, f"http://127.0.0.1:{callback.port}/callback")


async def test_a_stray_request_is_turned_away_and_the_login_waits_on() -> None:
    async with LoopbackCallback(0, timeout=10) as callback:
        waiting = asyncio.create_task(callback.wait("s1"))
        status, _ = await asyncio.to_thread(visit, f"http://127.0.0.1:{callback.port}/favicon.ico")
        assert status == 404 and not waiting.done()
        await asyncio.to_thread(visit, callback.redirect_uri + "?code=c&state=s1")
        assert (await waiting).code == "c"


@pytest.mark.parametrize(("query", "said"), [
    ("code=abc&state=forged", "different state than the login sent"),
    ("error=access_denied&error_description=User+said+no&state=s1",
     "refused the login (access_denied: User said no)"),
    ("state=s1", "without an authorization code"),
])
async def test_what_comes_back_wrong_is_named(query: str, said: str) -> None:
    """Named to tui-agent, and on the page the browser shows: "Login failed" and why, never
    "you can close this tab" (a refused login is not one to walk away from)."""
    async with LoopbackCallback(0, timeout=10) as callback:
        waiting = asyncio.create_task(callback.wait("s1"))
        status, page = await asyncio.to_thread(visit, f"{callback.redirect_uri}?{query}")
        with pytest.raises(LoginError, match=said.replace("(", r"\(").replace(")", r"\)")):
            await waiting
    assert status == 400
    assert "<h1>Login failed</h1>" in page and said in page, page
    assert "close this tab" not in page


async def test_a_redirect_before_the_wait_is_judged_by_the_state_sent() -> None:
    """A fast browser comes back before the login waits for it: the state the login sent
    (set when its page opened) decides the page all the same; markup in what the
    authorization server says is shown as text."""
    async with LoopbackCallback(0, timeout=10) as callback:
        callback.state = "s1"
        status, page = await asyncio.to_thread(
            visit, f"{callback.redirect_uri}?code=abc&state=old-tab")
        with pytest.raises(LoginError, match="different state"):
            await callback.wait("s1")
    assert status == 400 and "different state than the login sent" in page
    async with LoopbackCallback(0, timeout=10) as callback:
        callback.state = "s1"
        status, page = await asyncio.to_thread(
            visit, f"{callback.redirect_uri}?error=denied&error_description=%3Cb%3Eno%3C/b%3E")
        with pytest.raises(LoginError):
            await callback.wait("s1")
    assert "&lt;b&gt;no&lt;/b&gt;" in page and "<b>" not in page


async def test_no_redirect_in_time_says_so() -> None:
    async with LoopbackCallback(0, timeout=0.2) as callback:
        with pytest.raises(LoginError, match="did not come back to tui-agent within 0.2 s"):
            await callback.wait("s1")


async def test_a_port_in_use_is_named() -> None:
    async with LoopbackCallback(0) as first:
        with pytest.raises(LoginError, match=f"127.0.0.1:{first.port}.*callback_port"):
            async with LoopbackCallback(first.port):
                pass


async def test_a_port_chosen_for_a_later_login_stays_ours_until_then() -> None:
    """The redirect URI is fixed before the login starts (the client registers it): a port
    that was merely free then could be another program's by the time the person logs in
    (it happened in a busy test run). The port is held from the choice until the first
    login is over; then it is free (for ``tui-agent login`` in another terminal, which
    finds it registered), and a second login here (a step-up) binds it again."""

    def taken(port: int) -> bool:
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as most servers do
            try:
                other.bind(("127.0.0.1", port))
                other.listen()
            except OSError:
                return True
            return False

    callback = LoopbackCallback.on_a_free_port(timeout=10)
    port = callback.port
    assert port > 0 and callback.redirect_uri == f"http://127.0.0.1:{port}/callback"
    assert taken(port)
    for state in ("s1", "s2"):
        async with callback:
            assert callback.port == port
            waiting = asyncio.create_task(callback.wait(state))
            await asyncio.to_thread(visit, f"{callback.redirect_uri}?code=c-{state}&state={state}")
            assert (await waiting).code == f"c-{state}"
        assert not taken(port)
    unused = LoopbackCallback.on_a_free_port()
    held = unused.port
    assert taken(held)
    del unused  # a listener let go before any login lets its port go
    gc.collect()
    assert not taken(held)


def test_oauth_config_in_toml_and_in_peers_json(tmp_path: Path, monkeypatch: Any) -> None:
    """``[servers.NAME.oauth]`` with ``${VAR}``: expanded, the secret masked by
    ``config --show``; Claude Code's and gemini-cli's JSON spellings taken, the keys we do
    not need named in a warning."""
    from tui_agent.config import load
    from tui_agent.config.show import render

    monkeypatch.setenv("SVC_SECRET", "s3cret-from-env")
    toml = tmp_path / "config.toml"
    toml.write_text('[servers.svc]\nurl = "https://mcp.example.test/mcp"\n'
                    '[servers.svc.oauth]\ngrant = "client_credentials"\nclient_id = "bot"\n'
                    'client_secret = "${SVC_SECRET}"\nscopes = ["read", "write"]\n',
                    encoding="utf-8")
    peers = tmp_path / "mcp.json"
    peers.write_text(json.dumps({"mcpServers": {
        "linear": {"type": "http", "url": "https://mcp.linear.test/mcp",
                   "oauth": {"clientId": "abc", "callbackPort": 8765,
                             "authorizationUrl": "https://x.test/authorize"}}}}),
                     encoding="utf-8")
    settings = load(toml, [peers], project=False)
    svc = settings.config.servers["svc"].oauth
    assert svc is not None and svc.client_secret == "s3cret-from-env"
    assert svc.scopes == ["read", "write"]
    linear = settings.config.servers["linear"].oauth
    assert linear is not None and (linear.client_id, linear.callback_port) == ("abc", 8765)
    assert any("'authorizationUrl' is not used by tui-agent" in w for w in settings.warnings)
    shown = render(settings)
    assert "s3cret-from-env" not in shown and 'client_id = "bot"' in shown
    assert "s3cret-from-env" in settings.secrets


def test_a_key_file_is_read_at_load_and_its_problems_named(tmp_path: Path) -> None:
    from tui_agent.config import ConfigError, load

    toml = tmp_path / "config.toml"
    toml.write_text('[servers.svc]\nurl = "https://mcp.example.test/mcp"\n'
                    '[servers.svc.oauth]\ngrant = "client_credentials"\nclient_id = "bot"\n'
                    f'private_key_file = "{tmp_path / "missing.pem"}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 6: servers\.svc\.oauth\.private_key_file: "
                                          r"cannot read .*missing\.pem"):
        load(toml, [], project=False)
    (tmp_path / "missing.pem").write_text("-----BEGIN PRIVATE KEY-----\nx\n", encoding="utf-8")
    settings = load(toml, [], project=False)
    oauth = settings.config.servers["svc"].oauth
    assert oauth is not None and oauth.private_key_pem is not None
    assert oauth.private_key_pem in settings.secrets
