"""ASGI in front of the OAuth fake (tests/fakes/oauth_server.py) that enforces what a real
server checks of DPoP (RFC 9449) and of the jwt-bearer grant (RFC 7523), so the client's
side is held to the rules, not to a mock's expectations.

DPoP (``dpop_algs``): the authorization server's metadata lists the algorithms; a token
request's proof must verify against its own ``jwk`` header, be ``typ`` dpop+jwt with an
asymmetric ``alg``, name this request (``htm``, ``htu``), be fresh (``iat``) and new
(``jti`` never seen); the token it gets is bound to the key's thumbprint and answered as
``token_type DPoP`` (a refresh token too: its refresh must be proved by the same key). A
resource request with a bound token must say ``DPoP`` (Bearer is refused), carry a proof
by that key with ``ath`` the token's hash. ``nonce`` (``as``, ``rs``, ``both``) makes the
token endpoint and/or the resource demand a nonce (``use_dpop_nonce`` with ``DPoP-Nonce``);
``stubborn`` gives a new one at every demand and takes none (a client must not loop).

jwt-bearer (``jwt_key``): the token endpoint takes grant_type
urn:ietf:params:oauth:grant-type:jwt-bearer from ``jwt_client`` only, the assertion signed
by the key whose public PEM the test gave, for this authorization server (``aud``), from
``jwt_issuer`` about ``jwt_subject``, not expired.

Every token and resource request is recorded as one JSON line in ``record`` (what the
tests read: the grant, the key's thumbprint, the nonce sent, the scheme).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASYMMETRIC = {"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384",
              "PS512", "EdDSA"}
MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
Headers = list[tuple[bytes, bytes]]


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jkt_of(jwk: dict[str, Any]) -> str:
    """RFC 7638 thumbprint, computed here apart from the client's own."""
    picked = {k: jwk[k] for k in MEMBERS[jwk["kty"]]}
    return b64(hashlib.sha256(json.dumps(picked, separators=(",", ":"),
                                         sort_keys=True).encode()).digest())


class Guard:
    def __init__(self, app: Any, authority: Any, base: str, *, dpop_algs: list[str],
                 nonce: str = "", stubborn: bool = False, jwt_key: str | None = None,
                 jwt_client: str | None = None, jwt_issuer: str | None = None,
                 jwt_subject: str | None = None, record: Path | None = None) -> None:
        self.app, self.authority, self.base = app, authority, base
        self.algs, self.nonce, self.stubborn = dpop_algs, nonce, stubborn
        self.jwt_key, self.jwt_client = jwt_key, jwt_client
        self.jwt_issuer, self.jwt_subject, self.record = jwt_issuer, jwt_subject, record
        self.bound: dict[str, str] = {}
        """Access and refresh tokens -> the thumbprint they are bound to."""
        self.jtis: set[str] = set()
        self.nonces = {"as": "as-nonce-0", "rs": "rs-nonce-0"}

    def note(self, **event: Any) -> None:
        if self.record is not None:
            with self.record.open("a", encoding="utf-8") as out:
                out.write(json.dumps(event) + "\n")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        path = scope["path"]
        if path.startswith("/.well-known/oauth-authorization-server"):
            status, headers, content = await self._inner(scope, body, receive)
            await _answer(send, status, self._metadata(json.loads(content)), headers)
        elif path == "/token" and scope["method"] == "POST":
            await self._token(scope, body, receive, send)
        elif path.startswith("/mcp"):
            await self._resource(scope, body, receive, send)
        else:
            await self.app(scope, replay_body(body, receive), send)

    def _metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        if self.algs:
            metadata["dpop_signing_alg_values_supported"] = self.algs
        if self.jwt_key:
            metadata["grant_types_supported"] = [*metadata.get("grant_types_supported", []),
                                                 JWT_BEARER]
        return metadata

    def _demand(self, side: str) -> str | None:
        """The nonce ``side`` (as, rs) wants now, or None when it wants none."""
        if self.nonce not in (side, "both"):
            return None
        return self.nonces[side]

    def _challenged(self, side: str) -> str:
        """A nonce demand: a new nonce if stubborn; the nonce to send."""
        if self.stubborn:
            count = int(self.nonces[side].rsplit("-", 1)[1]) + 1
            self.nonces[side] = f"{side}-nonce-{count}"
        return self.nonces[side]

    async def _token(self, scope: Any, body: bytes, receive: Any, send: Any) -> None:
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        grant = form.get("grant_type", "")
        proof = _header(scope, b"dpop")
        jkt = nonce = None
        if self.algs and proof is not None:
            checked = self.check_proof(proof, "POST", f"{self.base}/token", None)
            if isinstance(checked, str):
                self.note(at="token", grant=grant, refused=checked)
                await _answer(send, 400, {"error": "invalid_dpop_proof",
                                          "error_description": checked})
                return
            jkt, claims = checked
            nonce = claims.get("nonce")
            wanted = self._demand("as")
            if wanted is not None and (self.stubborn or nonce != wanted):
                given = self._challenged("as")
                self.note(at="token", grant=grant, jkt=jkt, nonce=nonce, challenged=True)
                await _answer(send, 400, {"error": "use_dpop_nonce", "error_description":
                                          "the authorization server wants a DPoP nonce"},
                              [(b"dpop-nonce", given.encode())])
                return
        if grant == "refresh_token" and self.bound.get(form.get("refresh_token", "")) not in \
                (None, jkt):
            self.note(at="token", grant=grant, jkt=jkt, refused="refresh token of another key")
            await _answer(send, 400, {"error": "invalid_dpop_proof", "error_description":
                                      "the refresh token is bound to another key"})
            return
        if grant == JWT_BEARER and self.jwt_key:
            status, answer = self._jwt_bearer(form)
        else:
            status, _, content = await self._inner(scope, body, receive)
            answer = json.loads(content)
        if status == 200 and jkt is not None:
            answer["token_type"] = "DPoP"
            for kind in ("access_token", "refresh_token"):
                if kind in answer:
                    self.bound[answer[kind]] = jkt
        self.note(at="token", grant=grant, jkt=jkt, nonce=nonce, status=status,
                  token_type=answer.get("token_type"), error=answer.get("error"),
                  assertion_jti=self._jti(form.get("assertion")))
        await _answer(send, status, answer)

    def _jti(self, assertion: str | None) -> str | None:
        if not assertion:
            return None
        import jwt

        try:
            jti = jwt.decode(assertion, options={"verify_signature": False}).get("jti")
        except jwt.InvalidTokenError:
            return None
        return str(jti) if jti else None

    def _jwt_bearer(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        import jwt

        if form.get("client_id") != self.jwt_client:
            return 401, {"error": "invalid_client", "error_description":
                         f"unknown client {form.get('client_id')!r}"}
        assertion = form.get("assertion")
        if not assertion:
            return 400, {"error": "invalid_request", "error_description": "no assertion"}
        assert self.jwt_key is not None
        try:
            claims = jwt.decode(assertion, self.jwt_key, algorithms=["ES256", "RS256"],
                                audience=[self.base, f"{self.base}/"], issuer=self.jwt_issuer,
                                options={"require": ["exp", "iss", "sub", "aud"]})
        except jwt.ExpiredSignatureError:
            return 400, {"error": "invalid_grant", "error_description": "the assertion expired"}
        except jwt.InvalidTokenError as exc:
            return 400, {"error": "invalid_grant", "error_description": f"assertion: {exc}"}
        if claims["sub"] != self.jwt_subject:
            return 400, {"error": "invalid_grant", "error_description": "unknown subject"}
        scopes = form.get("scope", "mcp").split()
        token = self.authority._issue(form["client_id"], scopes, form.get("resource"))
        # no refresh token, as workload identity servers do: a new token is a new assertion
        return 200, token.model_dump(mode="json", exclude_none=True,
                                     exclude={"refresh_token"})

    async def _resource(self, scope: Any, body: bytes, receive: Any, send: Any) -> None:
        scheme, _, token = (_header(scope, b"authorization") or "").partition(" ")
        if scheme.lower() == "dpop":
            url = f"{self.base}{scope['path']}"
            checked = self.check_proof(_header(scope, b"dpop"), scope["method"], url, token)
            refusal = checked if isinstance(checked, str) else None
            if refusal is None and self.bound.get(token) != checked[0]:
                refusal = "the proof's key is not the key the token is bound to"
            if refusal is not None:
                self.note(at="mcp", scheme="DPoP", refused=refusal)
                await _refuse(send, "invalid_dpop_proof", refusal, self.algs)
                return
            assert not isinstance(checked, str)
            jkt, claims = checked
            wanted = self._demand("rs")
            if wanted is not None and (self.stubborn or claims.get("nonce") != wanted):
                given = self._challenged("rs")
                self.note(at="mcp", scheme="DPoP", jkt=jkt, nonce=claims.get("nonce"),
                          challenged=True)
                await _refuse(send, "use_dpop_nonce", "a DPoP nonce is wanted", self.algs,
                              given)
                return
            self.note(at="mcp", scheme="DPoP", jkt=jkt, nonce=claims.get("nonce"))
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"]
                                          if k != b"authorization"]
                     + [(b"authorization", f"Bearer {token}".encode())]}
        elif token in self.bound:
            self.note(at="mcp", scheme=scheme, refused="a bound token sent as Bearer")
            await _refuse(send, "invalid_token", "a DPoP-bound token must be sent as DPoP",
                          self.algs)
            return
        else:
            self.note(at="mcp", scheme=scheme or None)
        await self.app(scope, replay_body(body, receive), send)

    def check_proof(self, proof: str | None, method: str, url: str,
                    token: str | None) -> tuple[str, dict[str, Any]] | str:
        """(thumbprint, claims) of a proof that holds, or what is wrong with it."""
        import jwt

        if not proof:
            return "no DPoP proof"
        if "," in proof:
            return "more than one DPoP proof"
        try:
            header = jwt.get_unverified_header(proof)
        except jwt.InvalidTokenError:
            return "the DPoP proof is not a JWT"
        alg, jwk = header.get("alg"), header.get("jwk")
        if header.get("typ") != "dpop+jwt":
            return "typ is not dpop+jwt"
        if alg not in ASYMMETRIC or alg not in self.algs:
            return f"alg {alg} is not one offered"
        if not isinstance(jwk, dict) or "d" in jwk:
            return "jwk is missing, or holds a private key"
        try:
            key = jwt.PyJWK(jwk, algorithm=alg).key
            claims = jwt.decode(proof, key, algorithms=[alg])
        except (jwt.InvalidTokenError, jwt.PyJWKError) as exc:
            return f"the proof does not verify against its jwk ({exc})"
        if claims.get("htm") != method:
            return f"htm {claims.get('htm')} is not {method}"
        if str(claims.get("htu", "")).rstrip("/") != url.rstrip("/"):
            return f"htu {claims.get('htu')} is not {url}"
        iat = claims.get("iat")
        if not isinstance(iat, int) or abs(time.time() - iat) > 60:
            return "iat is not fresh"
        jti = claims.get("jti")
        if not isinstance(jti, str) or jti in self.jtis:
            return "jti missing or used before"
        self.jtis.add(jti)
        if token is not None:
            ath = b64(hashlib.sha256(token.encode()).digest())
            if claims.get("ath") != ath:
                return "ath is not the hash of the access token"
        return jkt_of(jwk), claims

    async def _inner(self, scope: Any, body: bytes, receive: Any) -> tuple[int, Headers, bytes]:
        """The wrapped app's whole answer to the request."""
        status, headers, chunks = 500, [], []

        async def keep(message: Any) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status, headers = message["status"], list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, replay_body(body, receive), keep)
        return status, [(k, v) for k, v in headers if k.lower() != b"content-length"], \
            b"".join(chunks)


def _header(scope: Any, name: bytes) -> str | None:
    found = [v.decode() for k, v in scope["headers"] if k.lower() == name]
    return ", ".join(found) if found else None


def replay_body(body: bytes, receive: Any) -> Any:
    """An ASGI ``receive`` that gives the request ``body`` (already read by a check in
    front of the app) once more, then whatever ``receive`` gives."""
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _answer(send: Any, status: int, body: dict[str, Any],
                  headers: Headers | None = None) -> None:
    page = json.dumps(body).encode()
    kept = [(k, v) for k, v in headers or [] if k.lower() not in (b"content-type",)]
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"cache-control", b"no-store"),
        (b"content-length", str(len(page)).encode()), *kept]})
    await send({"type": "http.response.body", "body": page})


async def _refuse(send: Any, error: str, description: str, algs: list[str],
                  nonce: str | None = None) -> None:
    challenge = (f'DPoP error="{error}", error_description="{description}", '
                 f'algs="{" ".join(algs)}"')
    headers = [(b"www-authenticate", challenge.encode())]
    if nonce is not None:
        headers.append((b"dpop-nonce", nonce.encode()))
    await _answer(send, 401, {"error": error}, headers)
