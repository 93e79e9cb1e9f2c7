"""The SDK's OAuth providers, built for one server from what tui-agent knows of it: the
grant (a browser login with PKCE, ``client_credentials`` with a secret or a signed JWT,
``id_jag``, or a workload's ``jwt_bearer``), a pre-registered client or a client metadata
document URL, the scopes, and the callback port. Discovery, registration, refresh and
step-up are the SDK's; DPoP (unless ``dpop = "off"``) wraps whichever flow it is
(:mod:`~tui_agent.tools.auth.dpop`).

A browser login opens the authorization URL with ``open_url`` (the front end's: a
browser, and the URL shown for an SSH session) and waits on a
:class:`~tui_agent.tools.auth.callback.LoopbackCallback` for the redirect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from tui_agent.config.oauth import OAuthSettings
from tui_agent.tools.auth.callback import LoginError, LoopbackCallback
from tui_agent.tools.auth.step_up import StepUp, wanted_scope, wider
from tui_agent.tools.auth.storage import TokenSlot, TokenStore

if TYPE_CHECKING:
    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull

OpenUrl = Callable[[str], None]
CLIENT_NAME = "tui-agent"
LOGIN_TIMEOUT = 300.0
"""Seconds a browser login may take before it is given up."""


def provider(server_url: str, plan: OAuthSettings, store: TokenStore, *,
             open_url: OpenUrl, login_timeout: float = LOGIN_TIMEOUT,
             name: str = "the server", may_login: Callable[[], bool] = lambda: False
             ) -> httpx2.Auth:
    """The ``httpx`` auth flow that logs in to ``server_url`` (the server ``name``) as
    ``plan`` says and keeps the tokens in ``store``; its failures are told in words
    (:class:`~tui_agent.tools.auth.failures.Worded`). ``may_login``: whether a browser
    login may start now without a server's asking (to widen a kept login to the scope a
    step-up wanted). Raises :class:`LoginError` for a plan that cannot work (a
    ``client_credentials`` grant without a client, a key that does not parse)."""
    from tui_agent.tools.auth.failures import Worded

    slot = store.slot(server_url, plan.client_id)
    inner: httpx2.Auth
    if plan.grant == "client_credentials":
        inner = _client_credentials(server_url, plan, slot)
    elif plan.grant == "id_jag":
        from tui_agent.tools.auth.id_jag import id_jag_provider

        inner = id_jag_provider(server_url, plan, slot)
    elif plan.grant == "jwt_bearer":
        from tui_agent.tools.auth.workload import jwt_bearer_provider

        inner = jwt_bearer_provider(server_url, plan, slot)
    else:
        inner = _browser_login(server_url, plan, slot, open_url, login_timeout, may_login)
    flow: httpx2.Auth = inner
    if plan.dpop == "auto":
        from tui_agent.tools.auth.dpop import Dpop

        flow = Dpop(inner, slot, name)
    worded = Worded(flow, name, plan)
    if isinstance(inner, StepUp):  # a failed step-up is told in the same words
        inner.words = worded.word
    return worded


def _client_credentials(server_url: str, plan: OAuthSettings, slot: TokenSlot) -> httpx2.Auth:
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    if not plan.client_id:
        raise LoginError("the client_credentials grant needs client_id (and client_secret, "
                         "or private_key_pem / private_key_file)")
    if plan.private_key_pem:
        _check_key(plan.private_key_pem)
        jwt = SignedJWTParameters(issuer=plan.client_id, subject=plan.client_id,
                                  signing_key=plan.private_key_pem,
                                  signing_algorithm=plan.signing_algorithm)
        return PrivateKeyJWTOAuthProvider(server_url, slot, plan.client_id,
                                          jwt.create_assertion_provider(), scope=_scope(plan),
                                          issuer=plan.issuer)
    if not plan.client_secret:
        raise LoginError("the client_credentials grant needs client_secret, or "
                         "private_key_pem / private_key_file for private_key_jwt")
    return ClientCredentialsOAuthProvider(server_url, slot, plan.client_id, plan.client_secret,
                                          scope=_scope(plan), issuer=plan.issuer)


def _check_key(pem: str) -> None:
    """A private key that does not parse is named now, not at the first token request."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise LoginError(f"private_key_pem is not a PEM private key without a passphrase "
                         f"({exc})") from None


class _PresetClient(TokenSlot):
    """A slot whose client is the configured one (``client_id``, ``client_secret``), so the
    SDK neither registers a client nor uses one registered before."""

    def __init__(self, slot: TokenSlot, info: OAuthClientInformationFull) -> None:
        super().__init__(slot.store, slot.key)
        self.info = info

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.info = client_info


class _Unregistered(TokenSlot):
    """The slot, but without the client registered before: its redirect port is held by
    another program, so the SDK registers a new client on a free port (kept, as any
    registration, once the server answers)."""

    def __init__(self, slot: TokenSlot) -> None:
        super().__init__(slot.store, slot.key)
        self.registered = False

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return await super().get_client_info() if self.registered else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await super().set_client_info(client_info)
        self.registered = True


def _taken(port: int) -> bool:
    """Whether another program listens on (or holds) 127.0.0.1:``port`` now."""
    import socket

    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the listener will
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _browser_login(server_url: str, plan: OAuthSettings, slot: TokenSlot,
                   open_url: OpenUrl, timeout: float,
                   may_login: Callable[[], bool]) -> OAuthClientProvider:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
    from pydantic import AnyUrl

    port = plan.callback_port or _registered_port(slot)
    fresh = (not plan.callback_port and not plan.client_id and port is not None
             and _taken(port) and "tokens" not in slot.store.record(slot.key))
    if fresh:  # registered on a port another program holds now, and a login is due
        port = None
    listener = (LoopbackCallback(port, timeout=timeout) if port
                else LoopbackCallback.on_a_free_port(timeout=timeout))
    redirect = AnyUrl(listener.redirect_uri)
    auth_method = "client_secret_basic" if plan.client_secret else "none"
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME, redirect_uris=[redirect], scope=_scope(plan),
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method=auth_method)  # type: ignore[arg-type]
    storage: TokenSlot = slot
    if fresh:
        storage = _Unregistered(slot)
    if plan.client_id:
        storage = _PresetClient(slot, OAuthClientInformationFull(
            client_id=plan.client_id, client_secret=plan.client_secret,
            redirect_uris=[redirect], token_endpoint_auth_method=auth_method,
            grant_types=["authorization_code", "refresh_token"]))
    login = _Login(listener, open_url)

    class Provider(StepUp, OAuthClientProvider):
        def waiting_on_person(self) -> bool:
            """A person is logging in to the server now."""
            return login.waiting()

        def cancel_login(self) -> bool:
            """Give up the login under way (False: there was none)."""
            return login.cancel()

        def reload(self) -> None:
            """Read the kept login again before the next request."""
            self._initialized = False

        loaded: str | None = None
        """The access token read from the store, if any."""

        async def _initialize(self) -> None:
            # The SDK reckons a token's expiry only when it receives one; tokens kept from an
            # earlier run would pass for valid until the server refused them, and a refusal
            # starts a new login, where a refresh would have done.
            await super()._initialize()
            tokens = self.context.current_tokens
            self.loaded = tokens.access_token if tokens is not None else None
            if tokens is not None:
                self.context.update_token_expiry(tokens)
            if may_login() and self._loaded_lacks_wanted(self.context):
                # A step-up asked for more than the kept login holds, and a person can log
                # in now: the login asks for all of it (the kept one stays until then).
                self.context.current_tokens = self.loaded = None

        asked: str | None = None
        """The scope this provider last asked for."""

        async def _perform_authorization_code_grant(self) -> tuple[str, str]:
            if plan.scopes:
                # Configured scopes are what the user wants, over what discovery picked
                # (the challenge's scope, or everything the server lists); a step-up widens
                # what was asked, and keeps its widening.
                chosen = self.context.client_metadata.scope or ""
                if self.asked is None or not set(chosen.split()) > set(self.asked.split()):
                    chosen = " ".join(plan.scopes)
                self.context.client_metadata.scope = self.asked = chosen
            wanted = wanted_scope(slot)  # what a refused step-up asked for, asked now too
            if wanted:
                self.context.client_metadata.scope = self.asked = wider(
                    self.context.client_metadata.scope, wanted)
            try:
                return await super()._perform_authorization_code_grant()
            except LoginError:
                # No login now (nobody to show it, or it failed): the kept tokens did not do
                # (expired past renewal, or revoked), and the next try reads the store again,
                # where a login made meanwhile (tui-agent login) has put new ones.
                if self.loaded is not None and not self.stepping_up:
                    slot.drop_tokens(self.loaded)
                self._initialized = False
                raise

    made = Provider(server_url, metadata, storage, redirect_handler=login.start,
                    callback_handler=login.finish, client_metadata_url=plan.client_metadata_url)
    made.slot = slot
    return made


class _Login:
    """One browser login at a time: the listener opens before the browser does, and the
    redirect must carry the state the authorization URL was sent with."""

    def __init__(self, listener: LoopbackCallback, open_url: OpenUrl) -> None:
        self.listener, self.open_url = listener, open_url
        self.state = ""
        self.active = False

    def waiting(self) -> bool:
        """A person is logging in now (from the page shown until the redirect or the
        login's time limit)."""
        return self.active

    def cancel(self) -> bool:
        """Stop waiting for the person; False when no login was under way."""
        return self.active and self.listener.cancel()

    async def start(self, authorization_url: str) -> None:
        self.state = (parse_qs(urlsplit(authorization_url).query).get("state") or [""])[0]
        await self.listener.__aenter__()
        self.listener.state = self.state  # the page the browser gets checks it too
        self.active = True  # already, for what the front end shows of the server meanwhile
        try:
            self.open_url(authorization_url)
        except BaseException:
            self.active = False
            await self.listener.__aexit__(None, None, None)
            raise

    async def finish(self) -> AuthorizationCodeResult:
        from mcp.shared.auth import AuthorizationCodeResult

        try:
            redirect = await self.listener.wait(self.state)
        finally:
            self.active = False
            await self.listener.__aexit__(None, None, None)
        return AuthorizationCodeResult(code=redirect.code or "", state=redirect.state,
                                       iss=redirect.iss)


def _registered_port(slot: TokenSlot) -> int | None:
    """The loopback port of the redirect URI a client registered earlier: the
    authorization server knows that one (a new port would need a new registration)."""
    client = slot.store.record(slot.key).get("client")
    uris = client.get("redirect_uris") if isinstance(client, dict) else None
    for uri in uris or []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return None


def _scope(plan: OAuthSettings) -> str | None:
    """The configured scopes, space-separated (None: let the server's challenge decide)."""
    return " ".join(plan.scopes) or None
