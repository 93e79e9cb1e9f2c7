"""A login's failures in words: which step failed (the server's protected-resource
metadata, the authorization server's metadata, registration, the token endpoint), what the
authorization server said (``invalid_client``, ``invalid_grant``, ``invalid_scope``...),
and what to do about it, instead of the SDK's ``OAuthTokenError: Token exchange failed
(401): {json}``.

:class:`Worded` wraps any provider: it tags each request of the flow with its step (so an
authorization server that does not answer is named where the
connection error is told, :func:`~tui_agent.tools.errors.describe_error`) and turns the
SDK's OAuth errors into a :class:`LoginError`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import parse_qs

import httpx2

from tui_agent.config.oauth import OAuthSettings
from tui_agent.tools.auth.callback import LoginError
from tui_agent.tools.errors import LOGIN_STEP

GRANTS = {
    "authorization_code": "authorization code", "refresh_token": "refresh token",
    "client_credentials": "client credentials",
    "urn:ietf:params:oauth:grant-type:jwt-bearer": "identity assertion (ID-JAG)",
    "urn:ietf:params:oauth:grant-type:token-exchange": "ID token exchange",
}
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
WORKLOAD = "workload identity assertion (jwt_bearer)"


class Worded(httpx2.Auth):
    """``inner``'s flow, its requests named and its failures told for the server ``name``."""

    def __init__(self, inner: httpx2.Auth, name: str, plan: OAuthSettings) -> None:
        self.inner, self.name, self.plan = inner, name, plan
        self.requires_response_body = inner.requires_response_body

    def __getattr__(self, attr: str) -> Any:  # waiting_on_person, context, ...
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    async def async_auth_flow(self, request: httpx2.Request
                              ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.inner.async_auth_flow(request)
        outgoing: httpx2.Request | None = None
        answer: httpx2.Response | None = None
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is not request:
                    outgoing.extensions[LOGIN_STEP] = _step(outgoing)
                answer = yield outgoing
                outgoing = await flow.asend(answer)
        except StopAsyncIteration:
            return
        except Exception as exc:
            failure = self.word(exc, outgoing, answer)
            if failure is None or failure is exc:
                raise
            raise failure from None
        finally:
            await flow.aclose()

    def word(self, exc: Exception, sent: httpx2.Request | None,
             answer: httpx2.Response | None) -> LoginError | None:
        """The login's failure ``exc`` (raised after ``sent`` got ``answer``) as a
        :class:`LoginError` in words; None for a failure that is not a login's."""
        if isinstance(exc, LoginError):
            refusal = exc.refusal
            return exc if refusal is None else \
                LoginError(self.refused(*refusal, grant="authorization_code"))
        if type(exc).__module__.startswith("mcp.") and "OAuth" in type(exc).__name__:
            return LoginError(self.told(exc, sent, answer))
        return None

    def told(self, exc: Exception, sent: httpx2.Request | None,
             answer: httpx2.Response | None) -> str:
        """The SDK's OAuth error ``exc``, raised after ``sent`` got ``answer``."""
        step = _step(sent) if sent is not None else "the login"
        said = _error_body(answer)
        if said is not None:
            error, description = said
            return self.refused(error, description, grant=grant_of(sent))
        if answer is not None and answer.status_code >= 400:
            return (f"{step} answered HTTP {answer.status_code} at {sent.url if sent else '?'}"
                    f" ({_first_line(exc)}): the server's OAuth setup is at fault, or down")
        return f"the login stopped at {step}: {_first_line(exc)}"

    def refused(self, error: str, description: str | None, *, grant: str | None) -> str:
        """The authorization server's ``error`` (RFC 6749 section 5.2 / 4.1.2.1), in words."""
        said = f"{error}: {description}" if description else error
        where = f"[servers.{self.name}.oauth]"
        kind = GRANTS.get(grant or "", grant or "login")
        if grant == JWT_BEARER and self.plan.grant == "jwt_bearer":
            kind = WORKLOAD
        if error == "invalid_client":
            if self.plan.client_id:
                return (f"the authorization server does not accept the client "
                        f"{self.plan.client_id!r} ({said}): check client_id and client_secret "
                        f"in {where}")
            return (f"the authorization server no longer knows the client tui-agent registered "
                    f"({said}): run 'tui-agent logout {self.name}', then log in again")
        if error == "invalid_grant":
            again = {"client credentials": f"check the client's credentials in {where}",
                     "identity assertion (ID-JAG)": f"check the id_jag settings in {where} (the "
                     "ID token may have expired)",
                     "ID token exchange": f"check idp_id_token in {where} (it may have expired)",
                     WORKLOAD: f"check {self._assertion()} in {where} (the platform's token "
                     "may have expired, or be meant for another audience)"}
            return (f"the authorization server refused the {kind} ({said}): "
                    f"{again.get(kind, f'log in again (tui-agent login {self.name})')}")
        if error == "invalid_scope":
            asked = self.plan.scopes
            fix = (f"check scopes in {where} (asked: {' '.join(asked)})" if asked else
                   f"name the scopes it grants in {where} (scopes = [...])")
            return f"the authorization server refused the scopes asked ({said}): {fix}"
        if error == "access_denied":
            return (f"the login was declined ({said}): log in again "
                    f"(tui-agent login {self.name}) to retry")
        if error == "use_dpop_nonce":
            return (f"the authorization server asked again for a DPoP nonce after tui-agent "
                    f"sent the one it gave ({said}); set dpop = \"off\" in {where} if it "
                    "does not need DPoP")
        if error in ("unauthorized_client", "unsupported_grant_type"):
            return (f"the authorization server does not let this client use the {kind} grant "
                    f"({said}): check grant in {where}")
        return f"the authorization server refused the {kind} ({said})"


    def _assertion(self) -> str:
        """Where the workload's JWT comes from, as the config says it."""
        path = self.plan.assertion_file
        return f"assertion_file ({path})" if path else "assertion"


def _step(request: httpx2.Request) -> str:
    path = request.url.path
    if "/.well-known/oauth-protected-resource" in path:
        return "the server's protected-resource metadata"
    if "/.well-known/oauth-authorization-server" in path or "openid-configuration" in path:
        return "the authorization server's metadata"
    grant = grant_of(request)
    if grant == "urn:ietf:params:oauth:grant-type:token-exchange":
        return "the identity provider's token endpoint"
    if grant is not None:
        return "the authorization server's token endpoint"
    if request.method == "POST" and request.headers.get("content-type", "").startswith(
            "application/json"):
        return "the authorization server's client registration"
    return "the authorization server"


def grant_of(request: httpx2.Request | None) -> str | None:
    """The ``grant_type`` of a token request."""
    if request is None or request.method != "POST":
        return None
    try:
        form = parse_qs(request.content.decode("utf-8", "replace"))
    except httpx2.RequestNotRead:
        return None
    grant = form.get("grant_type")
    return grant[0] if grant else None


def _error_body(answer: httpx2.Response | None) -> tuple[str, str | None] | None:
    """``(error, error_description)`` of an OAuth error response."""
    if answer is None or answer.status_code < 400:
        return None
    try:
        body = json.loads(answer.content)
    except (ValueError, httpx2.ResponseNotRead):
        return None
    if not isinstance(body, dict) or not isinstance(body.get("error"), str):
        return None
    description = body.get("error_description")
    return body["error"][:80], description[:300] if isinstance(description, str) else None


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:300]
