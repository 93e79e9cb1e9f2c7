"""``[servers.NAME.oauth]``: how tui-agent logs in to a remote MCP server, as the config
says it (validated here; the login itself is :mod:`tui_agent.tools.auth`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tui_agent.config.strict import Strict

OAUTH_ALIASES = {"clientId": "client_id", "clientSecret": "client_secret",
                 "callbackPort": "callback_port", "clientMetadataUrl": "client_metadata_url",
                 "scope": "scopes"}
"""The ``oauth`` keys other clients' JSON uses (Claude Code, gemini-cli, VS Code)."""
OAUTH_TEXT = ("client_id", "client_secret", "client_metadata_url", "private_key_pem",
              "private_key_file", "issuer", "idp_issuer", "idp_client_id", "idp_token_endpoint",
              "idp_id_token", "assertion", "assertion_file")
"""The values ``${VAR}`` is expanded in."""
OAUTH_SECRETS = frozenset({"client_secret", "private_key_pem", "idp_id_token", "assertion"})
"""Masked wherever they could show, however they were written."""


class OAuthSettings(Strict):
    """``[servers.NAME.oauth]``: how to log in to a remote server (``sse`` or ``http``).
    Every value is ``${VAR}`` expanded; secrets are masked wherever they could show."""

    enabled: bool = True
    """False: never log in; the server gets its static ``headers`` only."""
    grant: Literal["authorization_code", "client_credentials", "id_jag", "jwt_bearer"] = \
        "authorization_code"
    """``authorization_code``: a browser login (PKCE); ``client_credentials``: a service
    account; ``id_jag``: enterprise SSO (an IdP ID token exchanged for an ID-JAG);
    ``jwt_bearer``: workload identity (RFC 7523: a JWT the platform issued, presented as
    the grant)."""
    client_id: str | None = None
    """A pre-registered client; without one the client registers itself (or uses
    ``client_metadata_url`` where the server supports it)."""
    client_secret: str | None = None
    scopes: list[str] = Field(default_factory=list)
    """Asked for when the server does not say which it wants."""
    callback_port: int = Field(default=0, ge=0, le=65535)
    """The browser login's loopback port (0: any free one)."""
    client_metadata_url: str | None = None
    private_key_pem: str | None = None
    private_key_file: str | None = None
    signing_algorithm: str = "RS256"
    """For ``private_key_jwt`` (a ``client_credentials`` client with a key), e.g. ES256."""
    issuer: str | None = None
    """The authorization server; discovered from the server when unset."""
    idp_issuer: str | None = None
    idp_client_id: str | None = None
    idp_token_endpoint: str | None = None
    idp_id_token: str | None = None
    assertion: str | None = None
    """For ``jwt_bearer``: the workload's JWT (usually ``${VAR}``)."""
    assertion_file: str | None = None
    """For ``jwt_bearer``: a file holding the workload's JWT, read again at every token
    request (platforms rotate it: Kubernetes projected tokens, CI OIDC tokens)."""
    dpop: Literal["auto", "off"] = "auto"
    """``auto``: sender-constrained tokens (DPoP, RFC 9449) wherever the authorization
    server offers them; ``off``: plain bearer tokens."""

    @model_validator(mode="before")
    @classmethod
    def _peer_spellings(cls, data: object) -> object:
        if isinstance(data, dict):
            data = {OAUTH_ALIASES.get(k, k): v for k, v in data.items()}
            if isinstance(data.get("scopes"), str):
                data["scopes"] = data["scopes"].split()
        return data

    @model_validator(mode="after")
    def _complete(self) -> OAuthSettings:
        if self.private_key_pem and self.private_key_file:
            raise ValueError("give private_key_pem or private_key_file, not both")
        need: list[str] = []
        if self.grant == "client_credentials":
            need = [k for k in ("client_id",) if not getattr(self, k)]
            if not (self.client_secret or self.private_key_pem or self.private_key_file):
                need.append("client_secret (or private_key_pem / private_key_file)")
        elif self.grant == "jwt_bearer":
            if self.assertion and self.assertion_file:
                raise ValueError("grant 'jwt_bearer' takes assertion or assertion_file, not both")
            need = [k for k in ("client_id",) if not getattr(self, k)]
            if not (self.assertion or self.assertion_file):
                need.append("assertion (or assertion_file)")
        elif self.grant == "id_jag":
            need = [k for k in ("client_id", "client_secret", "idp_id_token")
                    if not getattr(self, k)]
            if not (self.idp_token_endpoint or self.idp_issuer):
                need.append("idp_token_endpoint (or idp_issuer)")
        if need:
            raise ValueError(f"grant '{self.grant}' needs {', '.join(need)}")
        return self
