"""DPoP around any of the SDK's OAuth providers, as an ``httpx`` auth flow that wraps
theirs: the SDK finds the servers, registers, asks for and renews tokens; this flow watches
what it sends and receives, and adds the proof of possession (RFC 9449).

It learns that the authorization server takes DPoP from its metadata
(``dpop_signing_alg_values_supported``), or that the resource wants it from its metadata
(``dpop_bound_access_tokens_required``) or its ``WWW-Authenticate: DPoP`` challenge; it
then makes a key for the server (ES256 unless only another is offered) and keeps it in the
server's token record, so tokens and key live and die together (``tui-agent logout``
forgets both). Every token request of the SDK's (code exchange, refresh, client
credentials, jwt-bearer) then carries a proof; a token the server answers with
``token_type DPoP`` is bound (the record keeps its hash, not the token), and is presented
as ``DPoP <token>`` with a fresh proof (``ath`` included) on every MCP request. The SDK's
token model knows only Bearer, so the answer it reads says Bearer.

A ``use_dpop_nonce`` answer (the token endpoint's 400, or the resource's 401) is retried
once with the nonce it gave; a second one for the same request is an error, never a loop.
Nonces are kept per origin (the resource's apart from the token endpoint's) for the run:
later proofs there carry the newest.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import httpx2

from tui_agent.tools.auth.callback import LoginError
from tui_agent.tools.auth.dpop.keys import DpopKey, choose_alg
from tui_agent.tools.auth.failures import grant_of
from tui_agent.tools.auth.storage import TokenSlot
from tui_agent.tools.auth.token_hash import token_hash

RECORD = "dpop"
"""The field of a server's record that keeps its DPoP key and which token is bound."""
METADATA = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
RESOURCE_METADATA = "/.well-known/oauth-protected-resource"


class Dpop(httpx2.Auth):
    """``inner``'s flow, with DPoP for the server whose record is ``slot``."""

    requires_response_body = True

    def __init__(self, inner: httpx2.Auth, slot: TokenSlot, name: str = "the server") -> None:
        self.inner, self.slot, self.name = inner, slot, name
        self.key: DpopKey | None = None
        self.bound: str | None = None
        """``ath`` of the token bound to the key (the one presented as DPoP)."""
        self.loaded = False
        self.nonces: dict[str, str] = {}

    def __getattr__(self, attr: str) -> Any:  # waiting_on_person, context, cancel_login...
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def reload(self) -> None:
        """Read the kept login (and key) again before the next request."""
        self.loaded = False
        reload = getattr(self.inner, "reload", None)
        if reload is not None:
            reload()

    async def async_auth_flow(self, request: httpx2.Request
                              ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        self._load()
        flow = self.inner.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                ours = outgoing is request
                self._prove(outgoing, ours)
                answer = await self._learn(outgoing, (yield outgoing), ours)
                if self._wants_nonce(answer, ours):
                    self._prove(outgoing, ours)  # a fresh proof, with the nonce just given
                    answer = await self._learn(outgoing, (yield outgoing), ours)
                    if ours and self._wants_nonce(answer, ours):
                        raise LoginError(f"{self.name} asked again for a DPoP nonce after "
                                         f"tui-agent sent the one it gave ({_said(answer)})")
                outgoing = await flow.asend(answer)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _load(self) -> None:
        if self.loaded:
            return
        kept = self.slot.store.record(self.slot.key).get(RECORD)
        self.key = DpopKey.from_record(kept)
        bound = kept.get("bound") if isinstance(kept, dict) else None
        self.bound = bound if isinstance(bound, str) and self.key is not None else None
        self.loaded = True

    def _keep(self) -> None:
        if self.key is not None:
            self.slot.store.update(self.slot.key, **{RECORD: {**self.key.record(),
                                                             "bound": self.bound}})

    def _want(self, offered: list[str] | None) -> None:
        """The server takes DPoP with the algorithms ``offered`` (None: it did not say):
        make a key for it, unless the one kept will do."""
        if self.key is not None and (offered is None or self.key.alg in offered):
            return
        alg = choose_alg(offered)
        if alg is None:
            return  # nothing we can sign with: tokens stay Bearer
        self.key, self.bound = DpopKey.generate(alg), None
        self._keep()

    def _prove(self, outgoing: httpx2.Request, ours: bool) -> None:
        """Put a fresh proof on ``outgoing`` (and the DPoP scheme on a bound token)."""
        if self.key is None:
            return
        nonce = self.nonces.get(_where(outgoing.url, ours))
        if not ours:
            if grant_of(outgoing) is not None:
                outgoing.headers["DPoP"] = self.key.proof("POST", str(outgoing.url),
                                                          nonce=nonce)
            return
        scheme, _, token = outgoing.headers.get("Authorization", "").partition(" ")
        if scheme.lower() in ("bearer", "dpop") and token and token_hash(token) == self.bound:
            outgoing.headers["Authorization"] = f"DPoP {token}"
            outgoing.headers["DPoP"] = self.key.proof(outgoing.method, str(outgoing.url),
                                                      access_token=token, nonce=nonce)
        else:
            outgoing.headers.pop("DPoP", None)

    async def _learn(self, outgoing: httpx2.Request, answer: httpx2.Response,
                     ours: bool) -> httpx2.Response:
        """What ``answer`` says of DPoP; the answer the SDK is to read. The MCP request's
        answer is left unread (it may be a stream); the login's own are small, read whole."""
        nonce = answer.headers.get("DPoP-Nonce")
        if nonce:
            self.nonces[_where(outgoing.url, ours)] = nonce
        path = outgoing.url.path
        if ours:
            challenge = answer.headers.get("WWW-Authenticate", "")
            if answer.status_code == 401 and challenge.lower().startswith("dpop"):
                self._want(_algs(challenge))
            return answer
        await answer.aread()
        if answer.status_code == 200 and any(p in path for p in METADATA):
            offered = _json(answer).get("dpop_signing_alg_values_supported")
            if isinstance(offered, list) and offered:
                self._want([str(a) for a in offered])
        elif answer.status_code == 200 and RESOURCE_METADATA in path:
            body = _json(answer)
            if body.get("dpop_bound_access_tokens_required") is True:
                offered = body.get("dpop_signing_alg_values_supported")
                self._want([str(a) for a in offered] if isinstance(offered, list) else None)
        elif answer.status_code == 200 and grant_of(outgoing) is not None:
            return self._token(answer)
        return answer

    def _token(self, answer: httpx2.Response) -> httpx2.Response:
        """A token answer: which token is bound, and the answer as the SDK reads it."""
        body = _json(answer)
        token = body.get("access_token")
        if not isinstance(token, str):
            return answer
        bound = str(body.get("token_type", "")).lower() == "dpop" and self.key is not None
        self.bound = token_hash(token) if bound else None
        self._keep()
        if not bound:
            return answer
        headers = [(k, v) for k, v in answer.headers.multi_items()
                   if k.lower() not in ("content-length", "content-encoding")]
        return httpx2.Response(answer.status_code, headers=headers,
                               content=json.dumps({**body, "token_type": "Bearer"}).encode(),
                               request=answer.request, extensions=answer.extensions)

    def _wants_nonce(self, answer: httpx2.Response, ours: bool) -> bool:
        """``answer`` is a ``use_dpop_nonce`` refusal that gave a nonce."""
        if self.key is None or not answer.headers.get("DPoP-Nonce"):
            return False
        if ours:
            return answer.status_code == 401 and "use_dpop_nonce" in \
                answer.headers.get("WWW-Authenticate", "")
        return answer.status_code == 400 and _json(answer).get("error") == "use_dpop_nonce"


def _where(url: httpx2.URL, resource: bool) -> str:
    """Whose nonce: the origin, and whether the resource's or the token endpoint's (the two
    keep their own, also on one origin)."""
    return f"{'resource' if resource else 'token'} {url.scheme}://{url.netloc.decode()}"


def _json(answer: httpx2.Response) -> dict[str, Any]:
    try:
        body = json.loads(answer.content)
    except (ValueError, httpx2.ResponseNotRead):
        return {}
    return body if isinstance(body, dict) else {}


def _algs(challenge: str) -> list[str] | None:
    """The ``algs`` a ``DPoP`` challenge offers (RFC 9449 section 7.1), if it names any."""
    import re

    found = re.search(r'algs="([^"]*)"', challenge)
    return found.group(1).split() if found else None


def _said(answer: httpx2.Response) -> str:
    challenge = answer.headers.get("WWW-Authenticate", "")
    return f"HTTP {answer.status_code}, {challenge}" if challenge else \
        f"HTTP {answer.status_code}"
