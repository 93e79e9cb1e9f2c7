"""Workload identity (``grant = "jwt_bearer"``, RFC 7523) against the OAuth fake with
tests/fakes/dpop_guard.py in front, whose token endpoint checks the grant type, the client
and the assertion (signed by the key this test holds, for this authorization server, from
the platform, about the workload, not expired), and issues no refresh token, as workload
identity servers do: the assertion file is read again at each token request (a platform
rotates it), a file that cannot be read and an assertion refused are named, a config that
gives both or neither is refused at load with its file and line."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# conftest's learned_here is autouse: what a test here learns is forgotten after it
from tests.test_dpop import noted, server, session, store_in  # noqa: F401

pytestmark = pytest.mark.slow

ISSUER = "https://platform.example"
SUBJECT = "system:serviceaccount:ci:agent"


class Platform:
    """The workload's platform: its signing key, and the JWTs it issues."""

    def __init__(self, tmp_path: Path) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        self.key = ec.generate_private_key(ec.SECP256R1())
        self.public = tmp_path / "platform.pem"
        self.public.write_bytes(self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    def issue(self, audience: str, jti: str, lifetime: int = 300) -> str:
        import jwt

        now = int(time.time())
        return jwt.encode({"iss": ISSUER, "sub": SUBJECT, "aud": audience, "iat": now,
                           "exp": now + lifetime, "jti": jti}, self.key, algorithm="ES256")


@contextmanager
def workload_server(tmp_path: Path, *flags: str) -> Iterator[tuple[str, Path, Platform, str]]:
    """The server taking the platform's JWTs; its URL, record, platform and issuer (the
    ``aud`` the platform's JWTs are for)."""
    platform = Platform(tmp_path)
    with server(tmp_path, "--jwt-key", str(platform.public), *flags) as (url, record):
        yield url, record, platform, url.removesuffix("/mcp") + "/"


@pytest.mark.anyio
async def test_the_assertion_file_is_read_again_at_each_token_request(tmp_path: Path) -> None:
    assertion = tmp_path / "token"
    with workload_server(tmp_path, "--token-ttl", "2") as (url, record, platform, aud):
        assertion.write_text(platform.issue(aud, "first") + "\n", encoding="utf-8")

        def rotate() -> None:  # the platform rotates the file; the token expires meanwhile
            assertion.write_text(platform.issue(aud, "rotated"), encoding="utf-8")
            time.sleep(2.5)  # there is no refresh token: a new token is a new grant

        state, error, answers = await session(
            url, store_in(tmp_path), tmp_path, calls=2, between=rotate, grant="jwt_bearer",
            client_id="workload", assertion_file=str(assertion))
    assert state == "connected" and answers == ["workload mcp"] * 2, error
    tokens = noted(record, "token")
    assert [(e["grant"], e["assertion_jti"], e["status"]) for e in tokens] == [
        ("urn:ietf:params:oauth:grant-type:jwt-bearer", "first", 200),
        ("urn:ietf:params:oauth:grant-type:jwt-bearer", "rotated", 200)]
    assert {e["token_type"] for e in tokens} == {"Bearer"}  # no DPoP offered here


@pytest.mark.anyio
async def test_with_dpop_the_grant_is_proved_and_the_token_bound(tmp_path: Path) -> None:
    with workload_server(tmp_path, "--dpop", "ES256") as (url, record, platform, aud):
        state, error, answers = await session(
            url, store_in(tmp_path), tmp_path, grant="jwt_bearer", client_id="workload",
            assertion=platform.issue(aud, "once"))
    assert state == "connected" and answers == ["workload mcp"], error
    [token] = noted(record, "token")
    assert (token["assertion_jti"], token["token_type"]) == ("once", "DPoP") and token["jkt"]
    assert {e["scheme"] for e in noted(record, "mcp") if e["scheme"]} == {"DPoP"}


@pytest.mark.anyio
async def test_an_assertion_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "token"
    with workload_server(tmp_path) as (url, record, _, _aud):
        state, error, _ = await session(url, store_in(tmp_path), tmp_path, grant="jwt_bearer",
                                        client_id="workload", assertion_file=str(missing))
    assert state == "failed"
    assert f"the jwt_bearer grant cannot read its assertion_file {missing}: No such file" \
        in (error or ""), error
    assert noted(record, "token") == []


@pytest.mark.anyio
@pytest.mark.parametrize(("client", "lifetime", "says"), [
    ("workload", -60, "the authorization server refused the workload identity assertion "
                      "(jwt_bearer) (invalid_grant: the assertion expired): check "
                      "assertion_file ({file}) in [servers.guarded.oauth] (the platform's "
                      "token may have expired"),
    ("someone-else", 300, "does not accept the client 'someone-else' (invalid_client"),
])
async def test_a_refused_assertion_is_named_and_not_tried_again(
        tmp_path: Path, client: str, lifetime: int, says: str) -> None:
    assertion = tmp_path / "token"
    with workload_server(tmp_path) as (url, record, platform, aud):
        assertion.write_text(platform.issue(aud, "old", lifetime), encoding="utf-8")
        state, error, _ = await session(url, store_in(tmp_path), tmp_path, grant="jwt_bearer",
                                        client_id=client, assertion_file=str(assertion))
    assert state == "failed" and says.format(file=assertion) in (error or ""), error
    assert len(noted(record, "token")) == 1  # no retry, no other grant


@pytest.mark.parametrize(("lines", "says"), [
    ('assertion = "x"\nassertion_file = "/f"', "takes assertion or assertion_file, not both"),
    ("", "grant 'jwt_bearer' needs client_id, assertion (or assertion_file)"),
])
def test_a_jwt_bearer_config_needs_one_assertion(tmp_path: Path, lines: str,
                                                 says: str) -> None:
    from tui_agent.config import ConfigError, load

    toml = tmp_path / "config.toml"
    client = 'client_id = "workload"\n' if lines else ""
    toml.write_text('[servers.svc]\nurl = "https://mcp.example.test/mcp"\n'
                    f'[servers.svc.oauth]\ngrant = "jwt_bearer"\n{client}{lines}\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load(toml, [], project=False)
    message = str(info.value)
    assert says in message and str(toml) in message and "line 3" in message, message


def test_the_assertion_is_masked_wherever_the_config_shows(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from tui_agent.config import load
    from tui_agent.config.show import render

    monkeypatch.setenv("WIF_TOKEN", "eyJhbGciOiJFUzI1NiJ9.workload.signature")
    toml = tmp_path / "config.toml"
    toml.write_text('[servers.svc]\nurl = "https://mcp.example.test/mcp"\n'
                    '[servers.svc.oauth]\ngrant = "jwt_bearer"\nclient_id = "ci"\n'
                    'assertion = "${WIF_TOKEN}"\ndpop = "off"\n', encoding="utf-8")
    settings = load(toml, [], project=False)
    oauth = settings.config.servers["svc"].oauth
    assert oauth is not None and oauth.assertion == os.environ["WIF_TOKEN"]
    assert oauth.dpop == "off"
    shown = render(settings)
    assert os.environ["WIF_TOKEN"] not in shown and 'grant = "jwt_bearer"' in shown
    assert os.environ["WIF_TOKEN"] in settings.secrets
