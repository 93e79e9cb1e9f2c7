"""Workload identity federation (RFC 7523 jwt-bearer, SEP-1933): the JWT a platform
issued to this workload (a Kubernetes projected service-account token, a CI job's OIDC
token) is presented to the authorization server as the grant, for an access token.

The JWT comes from the config (``assertion``, usually ``${VAR}``) or from a file
(``assertion_file``) read again at every token request, because platforms rotate it
underneath a running process. Discovery is the SDK's (the server's protected-resource
metadata names the authorization server); the client is the configured ``client_id``, with
``client_secret`` if it has one (else a public client, ``none``). A refused grant is not
tried again with another grant: the failure is told (:mod:`~tui_agent.tools.auth.failures`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import JWT_BEARER_GRANT_TYPE, OAuthClientInformationFull, OAuthClientMetadata

from tui_agent.config.interpolate import learn_secret
from tui_agent.config.oauth import OAuthSettings
from tui_agent.tools.auth.callback import LoginError
from tui_agent.tools.auth.storage import TokenSlot

if TYPE_CHECKING:
    import httpx2


def read_assertion(plan: OAuthSettings) -> str:
    """The workload's JWT, read now (from ``assertion_file`` if the config names one);
    raises :class:`LoginError` naming the grant and the file when it cannot be read."""
    if plan.assertion_file:
        path = Path(plan.assertion_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise LoginError(f"the jwt_bearer grant cannot read its assertion_file {path}: "
                             f"{why}") from None
        if not text:
            raise LoginError(f"the jwt_bearer grant's assertion_file {path} is empty")
    else:
        text = (plan.assertion or "").strip()
        if not text:
            raise LoginError("the jwt_bearer grant needs assertion (or assertion_file)")
    learn_secret(text)
    return text


def jwt_bearer_provider(server_url: str, plan: OAuthSettings,
                        slot: TokenSlot) -> OAuthClientProvider:
    """The ``httpx`` auth flow of the jwt-bearer grant; raises :class:`LoginError` when the
    config lacks what it needs."""
    if not plan.client_id:
        raise LoginError("the jwt_bearer grant needs client_id")
    if not (plan.assertion or plan.assertion_file):
        raise LoginError("the jwt_bearer grant needs assertion (or assertion_file)")
    return _JwtBearer(server_url, plan, slot)


class _JwtBearer(OAuthClientProvider):
    """The SDK's provider with its grant replaced: no registration (the client is the
    configured one), and the token request presents the workload's JWT."""

    def __init__(self, server_url: str, plan: OAuthSettings, slot: TokenSlot) -> None:
        method: Any = "client_secret_basic" if plan.client_secret else "none"
        scope = " ".join(plan.scopes) or None
        super().__init__(server_url, OAuthClientMetadata(
            redirect_uris=None, grant_types=[JWT_BEARER_GRANT_TYPE],
            token_endpoint_auth_method=method, scope=scope), slot)
        self.plan = plan
        self.client = OAuthClientInformationFull(
            redirect_uris=None, client_id=plan.client_id or "", client_secret=plan.client_secret,
            grant_types=[JWT_BEARER_GRANT_TYPE], token_endpoint_auth_method=method,
            scope=scope)

    async def _initialize(self) -> None:
        self.context.current_tokens = await self.context.storage.get_tokens()
        self.context.client_info = self.client
        self._initialized = True

    def _select_authorization_server(self, advertised: list[str]) -> str:
        from mcp.client.auth.utils import issuers_match

        issuer = self.plan.issuer
        return next((s for s in advertised if issuer and issuers_match(s, issuer)),
                    advertised[0])

    async def _perform_authorization(self) -> httpx2.Request:
        import httpx2

        data: dict[str, str] = {"grant_type": JWT_BEARER_GRANT_TYPE,
                                "assertion": read_assertion(self.plan),
                                "client_id": self.client.client_id or ""}
        if self.context.should_include_resource_param(self.context.protocol_version):
            data["resource"] = self.context.get_resource_url()
        if self.context.client_metadata.scope:
            data["scope"] = self.context.client_metadata.scope
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        data, headers = self.context.prepare_token_auth(data, headers)
        return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)
