"""Enterprise-managed authorization (SEP-990): the user's ID token from the company's
identity provider is exchanged there for an ID-JAG (RFC 8693 token exchange), which the
SDK's ``IdentityAssertionOAuthProvider`` redeems at the MCP server's authorization server
(RFC 7523 jwt-bearer). What the SDK leaves to us: the exchange at the IdP, and finding
the authorization server's issuer in the server's protected-resource metadata (RFC 9728)
when the config does not name it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
)
from mcp.shared._httpx_utils import RedirectAwareAuth

from tui_agent.config.oauth import OAuthSettings
from tui_agent.tools.auth.callback import LoginError
from tui_agent.tools.auth.storage import TokenSlot

if TYPE_CHECKING:
    import httpx2


TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def id_jag_provider(server_url: str, plan: OAuthSettings, slot: TokenSlot) -> httpx2.Auth:
    """The ``httpx`` auth flow of the ID-JAG grant. Raises :class:`LoginError` when the
    config lacks what the grant needs."""
    missing = [name for name in ("client_id", "client_secret", "idp_id_token")
               if not getattr(plan, name)]
    if not plan.idp_token_endpoint and not plan.idp_issuer:
        missing.append("idp_token_endpoint (or idp_issuer)")
    if missing:
        raise LoginError(f"the id_jag grant needs {', '.join(missing)}")
    return _IdJag(server_url, plan, slot)


class _IdJag(RedirectAwareAuth):
    """The SDK's provider, made once the authorization server's issuer is known: from the
    config, or else from the server's protected-resource metadata at its first 401."""

    requires_response_body = True

    def __init__(self, server_url: str, plan: OAuthSettings, slot: TokenSlot) -> None:
        self.server_url, self.plan, self.slot = server_url, plan, slot
        self.inner: IdentityAssertionOAuthProvider | None = \
            self._provider(plan.issuer) if plan.issuer else None

    def _provider(self, issuer: str) -> IdentityAssertionOAuthProvider:
        assert self.plan.client_id is not None and self.plan.client_secret is not None
        return IdentityAssertionOAuthProvider(
            self.server_url, self.slot, self.plan.client_id, self.plan.client_secret, issuer,
            self._exchange, scope=" ".join(self.plan.scopes) or None,
            token_endpoint_auth_method="client_secret_basic")

    async def _auth_flow(self, request: httpx2.Request
                         ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.inner is None:
            response = yield request
            if response.status_code != 401:
                return
            issuer = None
            for url in build_protected_resource_metadata_discovery_urls(
                    extract_resource_metadata_from_www_auth(response), self.server_url):
                answer = yield create_oauth_metadata_request(url)
                issuer = await _first_authorization_server(answer)
                if issuer is not None:
                    break
            if issuer is None:
                raise LoginError("the server names no authorization server in its protected-"
                                 "resource metadata; set issuer in [servers.NAME.oauth]")
            self.inner = self._provider(issuer)
        flow = self.inner._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                outgoing = await flow.asend((yield outgoing))
        except StopAsyncIteration:
            return

    async def _exchange(self, audience: str, resource: str) -> str:
        """RFC 8693 at the identity provider: the user's ID token for an ID-JAG whose
        audience is the MCP authorization server and whose resource is the MCP server."""
        from mcp.shared._httpx_utils import create_mcp_http_client

        plan = self.plan
        data = {"grant_type": TOKEN_EXCHANGE, "subject_token": plan.idp_id_token or "",
                "subject_token_type": ID_TOKEN, "requested_token_type": ID_JAG,
                "audience": audience, "resource": resource}
        if plan.idp_client_id:
            data["client_id"] = plan.idp_client_id
        if plan.scopes:
            data["scope"] = " ".join(plan.scopes)
        async with create_mcp_http_client() as http:
            endpoint = plan.idp_token_endpoint or await _idp_token_endpoint(http, plan)
            answer = await http.post(endpoint, data=data)
            body = _json(answer)
        if answer.status_code != 200:
            said = body.get("error_description") or body.get("error") or answer.status_code
            raise LoginError(f"the identity provider refused the token exchange ({said}); "
                             "check idp_id_token (it may have expired) and idp_client_id")
        token = body.get("access_token")
        if not isinstance(token, str) or body.get("issued_token_type") not in (None, ID_JAG):
            raise LoginError("the identity provider's token exchange did not return an ID-JAG")
        return token


async def _idp_token_endpoint(http: Any, plan: OAuthSettings) -> str:
    """The IdP's token endpoint from its OpenID discovery document."""
    url = f"{(plan.idp_issuer or '').rstrip('/')}/.well-known/openid-configuration"
    answer = await http.get(url)
    endpoint = _json(answer).get("token_endpoint")
    if answer.status_code != 200 or not isinstance(endpoint, str):
        raise LoginError(f"no token endpoint in the identity provider's discovery document "
                         f"({url}); set idp_token_endpoint")
    return endpoint


def _json(response: Any) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


async def _first_authorization_server(answer: Any) -> str | None:
    """The first authorization server a protected-resource metadata answer names."""
    from mcp.shared.auth import ProtectedResourceMetadata
    from pydantic import ValidationError

    if answer.status_code != 200:
        return None
    try:
        prm = ProtectedResourceMetadata.model_validate_json(await answer.aread())
    except ValidationError:
        return None
    servers = prm.authorization_servers or []
    return str(servers[0]) if servers else None
