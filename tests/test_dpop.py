"""DPoP (RFC 9449) against the OAuth fake with tests/fakes/dpop_guard.py in front, which
checks every proof as a real server does (its signature against its own ``jwk``, ``typ``,
``alg``, ``htm``/``htu``, a fresh ``iat``, a ``jti`` never seen, ``ath``, the key the token is
bound to) and notes each request in a record the tests read: the token is bound and
presented as DPoP with a fresh proof on every request, refreshed with a proof by the same
key, kept with its key across runs (and forgotten with it), nonces are given once and a
second demand is an error, ``dpop = "off"`` and a server without DPoP stay Bearer."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.test_login import guarded
from tui_agent.config.models import ServerConfig
from tui_agent.config.oauth import OAuthSettings
from tui_agent.tools.auth.dpop import RECORD, DpopKey
from tui_agent.tools.auth.dpop.keys import choose_alg
from tui_agent.tools.auth.providers import provider
from tui_agent.tools.auth.storage import FileVault, TokenStore
from tui_agent.tools.client import ClientSide
from tui_agent.tools.hub import Hub

pytestmark = pytest.mark.slow


@contextmanager
def server(tmp_path: Path, *flags: str) -> Iterator[tuple[str, Path]]:
    """The OAuth fake behind the guard, and the record of what it was sent."""
    record = tmp_path / "record.jsonl"
    record.unlink(missing_ok=True)
    with guarded("--record", str(record), *flags) as url:
        yield url, record


def noted(record: Path, at: str | None = None) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    events = [json.loads(line) for line in record.read_text().splitlines()]
    return [e for e in events if at is None or e["at"] == at]


def browse(url: str) -> None:
    """A browser that approves at once (in a thread: the listener answers on the loop)."""
    threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=15).read(),
                     daemon=True).start()


async def session(url: str, store: TokenStore, tmp_path: Path, calls: int = 1,
                  between: Callable[[], None] | None = None,
                  **plan: Any) -> tuple[str, str | None, list[str]]:
    """A hub on the server (a login in the stand-in browser if one is needed): its state,
    last error, and what ``calls`` calls of whoami answered (``between`` run before each
    call after the first)."""
    auth = provider(url, OAuthSettings.model_validate(plan), store, open_url=browse,
                    login_timeout=20, name="guarded")
    config = ServerConfig(url=url, transport="http", startup_timeout=25, max_attempts=1)
    answers: list[str] = []
    async with Hub({"guarded": config}, log_dir=tmp_path / "logs",
                   client_side=lambda name, cfg: ClientSide(auth=auth)) as hub:
        await hub.wait_all()
        status = hub.statuses()[0]
        for n in range(calls if status.state == "connected" else 0):
            if n and between is not None:
                between()
            whoami = next(s for s in hub.specs() if s.tool == "whoami")
            outcome = await hub.call(whoami, {})
            answers.append(("error: " if outcome.is_error else "") + outcome.text)
    return status.state, status.last_error, answers


def kept_key(store: TokenStore, url: str) -> DpopKey | None:
    return DpopKey.from_record(store.record(store.key(url)).get(RECORD))


def store_in(tmp_path: Path) -> TokenStore:
    return TokenStore(FileVault(tmp_path / "tokens.json"))


@pytest.mark.anyio
async def test_the_token_is_bound_and_every_request_proved(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    with server(tmp_path, "--dpop", "ES256") as (url, record):
        state, error, answers = await session(url, store, tmp_path, calls=2)
    assert state == "connected", error
    assert len(answers) == 2 and all(a.endswith(" mcp") for a in answers), answers
    key = kept_key(store, url)
    assert key is not None and key.alg == "ES256"
    [token] = noted(record, "token")
    assert (token["grant"], token["token_type"], token["jkt"]) == \
        ("authorization_code", "DPoP", key.thumbprint)
    mcp = [e for e in noted(record, "mcp") if e["scheme"]]
    assert len(mcp) >= 4  # initialize, its notice, tools/list, two calls...
    assert all((e["scheme"], e["jkt"]) == ("DPoP", key.thumbprint) and "refused" not in e
               for e in mcp), mcp


@pytest.mark.anyio
async def test_the_key_is_kept_across_runs_and_logout_forgets_it(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    with server(tmp_path, "--dpop", "ES256") as (url, record):
        assert (await session(url, store, tmp_path))[0] == "connected"
        first = kept_key(store, url)
        assert first is not None
        record.unlink()
        state, error, answers = await session(url, store, tmp_path)  # a new run
        assert state == "connected" and answers[0].endswith(" mcp"), error
        assert noted(record, "token") == []  # the kept token, with the kept key
        assert {e.get("jkt") for e in noted(record, "mcp") if e["scheme"]} == \
            {first.thumbprint}
        assert store.forget(url)  # tui-agent logout
        assert store.record(store.key(url)) == {}
        record.unlink()
        assert (await session(url, store, tmp_path))[0] == "connected"
    again = kept_key(store, url)
    assert again is not None and again.thumbprint != first.thumbprint
    assert [e["jkt"] for e in noted(record, "token")] == [again.thumbprint]


@pytest.mark.anyio
async def test_a_refresh_is_proved_by_the_same_key(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    with server(tmp_path, "--dpop", "ES256", "--token-ttl", "1",
                "--refreshed-ttl", "3600") as (url, record):
        assert (await session(url, store, tmp_path, calls=0))[0] == "connected"
        key = kept_key(store, url)
        assert key is not None
        time.sleep(1.5)  # the token has expired: the next run renews it
        state, error, answers = await session(url, store, tmp_path)
    assert state == "connected" and answers[0].endswith(" mcp"), error
    refresh = [e for e in noted(record, "token") if e["grant"] == "refresh_token"]
    assert [(e["jkt"], e["status"], e["token_type"]) for e in refresh] == \
        [(key.thumbprint, 200, "DPoP")]
    # ...and the renewed token is the one presented, as DPoP, by that key.
    last = [e for e in noted(record, "mcp") if e["scheme"]][-1]
    assert (last["scheme"], last["jkt"], last.get("refused")) == ("DPoP", key.thumbprint, None)


@pytest.mark.anyio
async def test_nonces_are_given_once_on_both_sides(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    with server(tmp_path, "--dpop", "ES256", "--dpop-nonce", "both") as (url, record):
        state, error, answers = await session(url, store, tmp_path)
    assert state == "connected" and answers[0].endswith(" mcp"), error
    tokens = noted(record, "token")
    assert [(e.get("challenged", False), e["nonce"]) for e in tokens] == \
        [(True, None), (False, "as-nonce-0")]
    mcp = [e for e in noted(record, "mcp") if e["scheme"]]
    assert (mcp[0].get("challenged"), mcp[0]["nonce"]) == (True, None)
    assert all(e["nonce"] == "rs-nonce-0" and not e.get("challenged") for e in mcp[1:])


@pytest.mark.anyio
@pytest.mark.parametrize(("side", "at", "says"), [
    ("rs", "mcp", "guarded asked again for a DPoP nonce after tui-agent sent the one it gave"),
    ("as", "token", "the authorization server asked again for a DPoP nonce after tui-agent "
                    "sent the one it gave (use_dpop_nonce"),
])
async def test_a_second_nonce_demand_is_an_error_not_a_loop(tmp_path: Path, side: str,
                                                            at: str, says: str) -> None:
    with server(tmp_path, "--dpop", "ES256", "--dpop-nonce", side,
                "--dpop-stubborn") as (url, record):
        state, error, _ = await session(url, store_in(tmp_path), tmp_path)
    assert state == "failed" and says in (error or ""), error
    demands = [e for e in noted(record, at) if e.get("challenged")]
    assert [e["nonce"] for e in demands] == [None, f"{side}-nonce-1"]


@pytest.mark.anyio
@pytest.mark.parametrize(("flags", "plan"), [
    (("--dpop", "ES256"), {"dpop": "off"}),
    ((), {}),  # a server without DPoP
])
async def test_without_dpop_the_token_stays_bearer(tmp_path: Path, flags: tuple[str, ...],
                                                   plan: dict[str, str]) -> None:
    store = store_in(tmp_path)
    with server(tmp_path, *flags) as (url, record):
        state, error, answers = await session(url, store, tmp_path, 1, None, **plan)
    assert state == "connected" and answers[0].endswith(" mcp"), error
    assert [(e["jkt"], e["token_type"]) for e in noted(record, "token")] == [(None, "Bearer")]
    assert {e["scheme"] for e in noted(record, "mcp") if e["scheme"]} == {"Bearer"}
    assert RECORD not in store.record(store.key(url))


def test_es256_unless_only_another_is_offered() -> None:
    assert choose_alg(["RS256", "ES256"]) == "ES256"
    assert choose_alg(["PS512", "RS256", "ES384"]) == "RS256"
    assert choose_alg(["HS256"]) is None  # nothing asymmetric tui-agent signs with
    assert choose_alg(None) == "ES256"
    key = DpopKey.generate("RS256")
    assert "d" not in key.public_jwk and DpopKey.from_record(key.record()) is not None


@pytest.mark.anyio
async def test_the_guard_refuses_what_a_real_server_refuses(tmp_path: Path) -> None:
    """The fake's own checks can fail: a proof by another key, the bound token as Bearer, a
    wrong ``ath``, ``htm`` or ``htu``, a ``jti`` used twice are each refused, by name."""
    import httpx

    store = store_in(tmp_path)
    with server(tmp_path, "--dpop", "ES256") as (url, record):
        assert (await session(url, store, tmp_path, calls=0))[0] == "connected"
        key = kept_key(store, url)
        assert key is not None
        token = store.record(store.key(url))["tokens"]["access_token"]

        def send(scheme: str, proof: str) -> httpx.Response:
            return httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                              headers={"Authorization": f"{scheme} {token}", "DPoP": proof,
                                       "Accept": "application/json, text/event-stream"})

        other = DpopKey.generate("ES256")
        for scheme, proof, says in [
                ("DPoP", other.proof("POST", url, access_token=token), "not the key"),
                ("Bearer", key.proof("POST", url, access_token=token), "must be sent as DPoP"),
                ("DPoP", key.proof("POST", url, access_token="another"), "ath is not"),
                ("DPoP", key.proof("GET", url, access_token=token), "htm GET is not POST"),
                ("DPoP", key.proof("POST", url + "x", access_token=token), "htu"),
        ]:
            answer = send(scheme, proof)
            assert answer.status_code == 401 and says in answer.headers["www-authenticate"], \
                (says, answer.headers)
        proof = key.proof("POST", url, access_token=token)
        assert send("DPoP", proof).status_code != 401  # the right key, once
        replayed = send("DPoP", proof)
        assert replayed.status_code == 401 and "jti" in replayed.headers["www-authenticate"]
        # A refresh token bound to the key is refused to a proof by another.
        kept = store.record(store.key(url))
        endpoint = url.removesuffix("/mcp") + "/token"
        refresh = httpx.post(endpoint, data={
            "grant_type": "refresh_token", "refresh_token": kept["tokens"]["refresh_token"],
            "client_id": kept["client"]["client_id"]},
            headers={"DPoP": other.proof("POST", endpoint)})
        assert refresh.status_code == 400 and "bound to another key" in refresh.text
