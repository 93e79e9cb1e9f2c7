"""An OAuth-protected MCP server (streamable HTTP) built with the SDK's own server side:
it is its own authorization server (metadata, dynamic client registration, an
authorization endpoint that approves at once, PKCE, refresh tokens), and serves a
``whoami`` tool that says which client and scopes the call's token carries.

    python -m tests.fakes.oauth_server --port N [--token-ttl S] [--refreshed-ttl S]
        [--client ID:SECRET --callback-port C] [--lose-codes] [--authority-port P]
        [--call-scope S [--refuse-wider]]

``--client`` pre-registers a client (scope ``mcp``, redirect to the loopback port ``C``)
for a user's ``client_id`` / ``client_secret``; ``--lose-codes`` makes the token endpoint
forget every authorization code (``invalid_grant``); ``--authority-port`` names, in the
protected-resource metadata, an authorization server on another port (nothing listens
there unless a test starts one); ``--call-scope`` makes ``tools/call`` need the scope ``S``
beyond ``mcp`` (a token without it gets ``403 insufficient_scope`` naming both, as the
spec's step-up asks), and registers clients for both; ``--refuse-wider`` then makes the
token endpoint refuse every code granted for that wider scope (``invalid_grant``): the
step-up's login fails at the token exchange, after an ordinary login worked;
``--refusal-delay S`` makes each such 403 take ``S`` seconds. ``--dpop ALGS``,
``--dpop-nonce``, ``--jwt-key`` and ``--record`` put tests/fakes/dpop_guard.py in front
(DPoP and the jwt-bearer grant, their rules enforced). A ``tools/call`` of
``late_error`` (a tool it does not list; ``seconds`` argument) is answered with a JSON-RPC
error that many seconds late, whatever the token.

Tokens live in memory: restarting the server revokes every token it issued (a refresh
then fails, as it does when a user revokes an app).
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl


class MemoryAuthority:
    """An authorization server that approves every request and remembers in memory."""

    def __init__(self, token_ttl: int, lose_codes: bool = False,
                 refreshed_ttl: int | None = None, extra_scope: str | None = None,
                 refuse_wider: bool = False) -> None:
        self.ttl, self.lose_codes, self.extra_scope = token_ttl, lose_codes, extra_scope
        self.refuse_wider = refuse_wider
        self.refreshed_ttl = token_ttl if refreshed_ttl is None else refreshed_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        if self.extra_scope:  # a client may step up to the wider scope later
            client_info.scope = f"mcp {self.extra_scope}"
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["mcp"], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        code = None if self.lose_codes else self.codes.get(authorization_code)
        if code is not None and self.refuse_wider and self.extra_scope in code.scopes:
            return None
        return code

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(authorization_code.client_id, authorization_code.scopes,
                           authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes,
                           refresh_token.resource, self.refreshed_ttl)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(getattr(token, "token", ""), None)
        self.refresh.pop(getattr(token, "token", ""), None)

    async def exchange_identity_assertion(self, client: OAuthClientInformationFull,
                                          params: Any) -> OAuthToken:
        raise NotImplementedError("this server takes no identity assertions")

    def _issue(self, client_id: str, scopes: list[str], resource: str | None,
               ttl: int | None = None) -> OAuthToken:
        ttl = self.ttl if ttl is None else ttl
        access, refresh = f"at-{secrets.token_urlsafe(16)}", f"rt-{secrets.token_urlsafe(16)}"
        # rounded up: a token is never issued already expired (int() cut up to a second)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=math.ceil(time.time() + ttl),
                                          resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=resource)
        return OAuthToken(access_token=access, expires_in=ttl, scope=" ".join(scopes),
                          refresh_token=refresh)


class StepUp:
    """ASGI: a ``tools/call`` whose token lacks ``scope`` is refused with 403
    ``insufficient_scope`` (RFC 6750 section 3.1), the scopes it needs in the challenge."""

    def __init__(self, app: Any, authority: MemoryAuthority, scope: str, base: str,
                 refusal_delay: float = 0) -> None:
        self.app, self.authority, self.scope, self.base = app, authority, scope, base
        self.refusal_delay = refusal_delay

    @staticmethod
    async def _late_error(send: Any, request_id: object, seconds: float) -> None:
        """The answer to a call of ``late_error``: a JSON-RPC error, ``seconds`` late."""
        await anyio.sleep(seconds)
        page = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
            "code": -32603, "message": "late and unrelated"}}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": page})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        late = _late_error(body)
        if late is not None:
            await self._late_error(send, *late)
            return
        if self._lacks_scope(scope, body):
            await anyio.sleep(self.refusal_delay)
            challenge = (f'Bearer error="insufficient_scope", scope="mcp {self.scope}", '
                         f'resource_metadata="{self.base}/.well-known/oauth-protected-resource'
                         '/mcp"')
            page = json.dumps({"error": "insufficient_scope"}).encode()
            await send({"type": "http.response.start", "status": 403, "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", challenge.encode())]})
            await send({"type": "http.response.body", "body": page})
            return
        from tests.fakes.dpop_guard import replay_body

        await self.app(scope, replay_body(body, receive), send)

    def _lacks_scope(self, scope: Any, body: bytes) -> bool:
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            return False
        headers = dict(scope["headers"])
        bearer = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        token = self.authority.access.get(bearer)
        return method == "tools/call" and token is not None and self.scope not in token.scopes


def _late_error(body: bytes) -> tuple[object, float] | None:
    """``(id, seconds)`` of a ``tools/call`` of ``late_error`` (a tool no server lists)."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    params = message.get("params") if isinstance(message, dict) else None
    if message.get("method") != "tools/call" or not isinstance(params, dict) or \
            params.get("name") != "late_error":
        return None
    return message.get("id"), float((params.get("arguments") or {}).get("seconds", 0))


def build(port: int, token_ttl: int, client: str | None = None, callback_port: int = 0,
          lose_codes: bool = False, authority_port: int | None = None,
          refreshed_ttl: int | None = None, call_scope: str | None = None,
          refuse_wider: bool = False) -> tuple[MCPServer, MemoryAuthority]:
    """The server and its authorization server."""
    base = f"http://127.0.0.1:{port}"
    authority = MemoryAuthority(token_ttl, lose_codes, refreshed_ttl, call_scope, refuse_wider)
    if client:
        client_id, _, secret = client.partition(":")
        authority.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id, client_secret=secret or None, scope="mcp",
            redirect_uris=[AnyUrl(f"http://127.0.0.1:{callback_port}/callback")],
            token_endpoint_auth_method="client_secret_basic"
            if secret else "none", grant_types=["authorization_code", "refresh_token"])
    issuer = f"http://127.0.0.1:{authority_port}" if authority_port else base
    server = MCPServer(
        "guarded", auth_server_provider=authority,
        auth=AuthSettings(issuer_url=AnyHttpUrl(issuer),
                          resource_server_url=AnyHttpUrl(f"{base}/mcp"),
                          validate_token_resource=False,
                          client_registration_options=ClientRegistrationOptions(
                              enabled=True, valid_scopes=["mcp", *filter(None, [call_scope])],
                              default_scopes=["mcp"]),
                          required_scopes=["mcp"]))

    @server.tool(description="Which client this call's token was issued to, and its scopes.")
    def whoami() -> str:
        token = get_access_token()
        return f"{token.client_id} {' '.join(token.scopes)}" if token else "anonymous"

    @server.tool(description="Echo the bearer token this call came with (a debugging server).")
    def echo_auth() -> str:
        token = get_access_token()
        return f"you sent Bearer {token.token}" if token else "no token"

    return server, authority


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-ttl", type=int, default=3600)
    parser.add_argument("--client")
    parser.add_argument("--callback-port", type=int, default=0)
    parser.add_argument("--lose-codes", action="store_true")
    parser.add_argument("--authority-port", type=int)
    parser.add_argument("--refreshed-ttl", type=int, default=None,
                        help="seconds a token issued by a refresh lives (default: --token-ttl)")
    parser.add_argument("--call-scope", help="a scope tools/call needs beyond mcp (step-up)")
    parser.add_argument("--refusal-delay", type=float, default=0,
                        help="seconds each 403 insufficient_scope takes")
    parser.add_argument("--refuse-wider", action="store_true",
                        help="the token endpoint refuses codes granted for --call-scope")
    parser.add_argument("--dpop", default="", help="DPoP algorithms offered (tests/fakes/"
                        "dpop_guard.py enforces the rules), e.g. 'ES256 RS256'")
    parser.add_argument("--dpop-nonce", default="", choices=["", "as", "rs", "both"])
    parser.add_argument("--dpop-stubborn", action="store_true",
                        help="every nonce demand gives a new nonce and takes none")
    parser.add_argument("--jwt-key", help="a public PEM file: take the jwt-bearer grant")
    parser.add_argument("--jwt-client", default="workload")
    parser.add_argument("--jwt-issuer", default="https://platform.example")
    parser.add_argument("--jwt-subject", default="system:serviceaccount:ci:agent")
    parser.add_argument("--record", help="a file each token and MCP request is noted in")
    args = parser.parse_args()
    server, authority = build(args.port, args.token_ttl, args.client, args.callback_port,
                              args.lose_codes, args.authority_port, args.refreshed_ttl,
                              args.call_scope, args.refuse_wider)
    if not (args.call_scope or args.dpop or args.jwt_key or args.record):
        server.run("streamable-http", host="127.0.0.1", port=args.port)
        return
    import uvicorn

    from tests.fakes.dpop_guard import Guard

    base = f"http://127.0.0.1:{args.port}"
    app: Any = server.streamable_http_app(host="127.0.0.1")
    if args.call_scope:
        app = StepUp(app, authority, args.call_scope, base, args.refusal_delay)
    key = Path(args.jwt_key).read_text(encoding="utf-8") if args.jwt_key else None
    app = Guard(app, authority, base, dpop_algs=args.dpop.split(), nonce=args.dpop_nonce,
                stubborn=args.dpop_stubborn, jwt_key=key, jwt_client=args.jwt_client,
                jwt_issuer=args.jwt_issuer, jwt_subject=args.jwt_subject,
                record=Path(args.record) if args.record else None)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
