"""The logins of a run's remote servers: each ``sse`` or ``http`` server gets an OAuth
provider (unless it sends its own ``Authorization`` header or says ``oauth.enabled =
false``), the tokens are kept in one :class:`TokenStore`, and a browser login is started
only where the front end can show one.

A front end that cannot (no terminal; the chat app until a person asks on the servers
screen) leaves it closed: a server that needs a login then fails with "needs login" and
what to do, and the others go on.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

import httpx2

from tui_agent.config.models import ServerConfig
from tui_agent.config.oauth import OAuthSettings
from tui_agent.tools.auth.callback import LoginError, NeedsLogin
from tui_agent.tools.auth.providers import provider
from tui_agent.tools.auth.storage import Login, TokenStore
from tui_agent.tools.client import NOTHING, ClientSide
from tui_agent.tools.text import clean

ShowLogin = Callable[[str, str], None]
"""``(server, url)``: show a person the login page of ``server``."""


class Logins:
    """The OAuth side of every remote server of one run.

    Args:
        store: where the tokens are kept.
        open_url: how to show a person a server's login page (a browser, and the URL
            printed); None when nobody can be shown one.
        interactive: whether a login may start by itself when a server asks for one
            (``tui-agent run`` on a terminal); otherwise only for servers :meth:`allow`
            names.
    """

    def __init__(self, store: TokenStore, open_url: ShowLogin | None, *,
                 interactive: bool = False) -> None:
        self.store, self.open_url, self.interactive = store, open_url, interactive
        self.allowed: set[str] = set()
        self.auths: dict[str, httpx2.Auth] = {}
        """Each server's login flow, by name."""

    @staticmethod
    def applies(config: ServerConfig) -> bool:
        """Whether the server may log in: remote, no static ``Authorization`` header, and
        not switched off."""
        return (config.transport in ("sse", "http") and config.url is not None
                and not own_authorization(config)
                and (config.oauth is None or config.oauth.enabled))

    def client_side(self, name: str, config: ServerConfig) -> ClientSide:
        """The server's :class:`ClientSide` (for ``Hub(client_side=...)``)."""
        if config.transport not in ("sse", "http"):
            return NOTHING
        if not self.applies(config):
            return ClientSide(auth=_NoLogin(name, config))
        assert config.url is not None
        try:
            auth: httpx2.Auth = provider(config.url, config.oauth or OAuthSettings(),
                                         self.store, open_url=self._opener(name), name=name,
                                         may_login=lambda: self.may_show(name))
        except LoginError as exc:  # e.g. a key that does not parse: the server fails with it
            auth = _Refused(exc)
        self.auths[name] = auth
        return ClientSide(auth=auth, waiting_on_person=getattr(auth, "waiting_on_person", None),
                          cancel_login=getattr(auth, "cancel_login", None))

    def allow(self, name: str) -> None:
        """Let ``name`` start a browser login (a person asked for it) until one opens or
        :meth:`disallow`."""
        self.allowed.add(name)

    def disallow(self, name: str) -> None:
        """The start a person asked for is over (it may have needed no login): a later
        one, days on, opens no browser by itself."""
        self.allowed.discard(name)

    def reload(self, name: str) -> None:
        """Have ``name``'s next request read its login from the store again (a logout made
        elsewhere then means a login, not the tokens this run still holds)."""
        reload = getattr(self.auths.get(name), "reload", None)
        if reload is not None:
            reload()

    def holds_token(self, name: str) -> bool:
        """This run's flow for ``name`` holds an access token (kept or not)."""
        context = getattr(self.auths.get(name), "context", None)
        tokens = getattr(context, "current_tokens", None)
        return bool(getattr(tokens, "access_token", None))

    def uses_oauth(self, name: str, config: ServerConfig) -> bool:
        """Whether the server is known to log in with OAuth: its config has an ``oauth``
        table, or it asked for a login (HTTP 401) in this run, or this run holds a token
        for it. A server that failed before it asked for anything (nothing answers at its
        URL) is not known to: no "not logged in" is said of it."""
        return (config.oauth is not None or self.holds_token(name)
                or bool(getattr(self.auths.get(name), "asked_login", False)))

    def may_show(self, name: str) -> bool:
        """Whether a browser login to ``name`` may start now."""
        return self.open_url is not None and (self.interactive or name in self.allowed)

    def _opener(self, name: str) -> Callable[[str], None]:
        def open_url(url: str) -> None:
            if self.open_url is None or not self.may_show(name):
                raise NeedsLogin(f"needs login: run 'tui-agent login {name}'")
            self.allowed.discard(name)  # one login per request
            self.open_url(name, url)

        return open_url

    def status(self, config: ServerConfig) -> Login | None:
        """Who is logged in to the server, or None (not logged in, or no login applies)."""
        if not self.applies(config):
            return None
        return self.store.status(*_key(config))

    def forget(self, config: ServerConfig) -> bool:
        """Log out of the server; False when there was nothing to forget."""
        return self.store.forget(*_key(config)) if config.url else False


def logged_in(name: str, who: str) -> str:
    """How a login to server ``name`` that worked is told (``who``: who is logged in until
    when), by ``tui-agent login`` and the app alike."""
    return f"logged in to {name}: {who}"


def could_not_log_in(name: str, why: str) -> str:
    """How a login to server ``name`` that failed is told (``why``: the step that failed),
    by ``tui-agent login`` and the app alike."""
    return clean(f"could not log in to {name}: {why}")


def own_authorization(config: ServerConfig) -> bool:
    """The server sends a static ``Authorization`` header of its own (from the config)."""
    return any(k.lower() == "authorization" for k in config.headers)


def _key(config: ServerConfig) -> tuple[str, str | None]:
    """Where the server's record is kept: its URL and configured client."""
    return config.url or "", config.oauth.client_id if config.oauth else None


class _NoLogin(httpx2.Auth):
    """A remote server that does not log in (its own ``Authorization`` header, or
    ``oauth.enabled = false``): a 401 is named for what it is, not "MCP error -32603"."""

    def __init__(self, name: str, config: ServerConfig) -> None:
        self.why = (f"the server {name} refused the Authorization header in its config "
                    f"(HTTP 401): fix the header, or remove it to log in with OAuth "
                    f"('tui-agent login {name}')") if own_authorization(config) else \
            (f"the server {name} wants a login (HTTP 401) but its oauth is switched off "
             "(oauth.enabled = false)")

    async def async_auth_flow(self, request: httpx2.Request
                              ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        response = yield request
        if response.status_code == 401:
            raise LoginError(self.why)


class _Refused(httpx2.Auth):
    """The auth of a server whose login cannot work as configured: every request fails
    with why, so the server shows it (and the others start)."""

    def __init__(self, error: LoginError) -> None:
        self.error = error

    async def async_auth_flow(self, request: httpx2.Request
                              ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        raise self.error
        yield request  # pragma: no cover (makes this a generator)
