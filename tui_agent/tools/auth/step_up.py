"""A scope step-up that cannot happen now: the server answers a request with ``403
insufficient_scope`` and the scope it wants (RFC 6750 section 3.1, the MCP spec's
step-up), and the wider login cannot run (nobody to show it, or it failed).

:class:`StepUp` is mixed into the browser login's provider (the SDK's, which runs the
wider login itself when it can). When it cannot: the request goes out once more as it
was, so the transport gets the server's refusal as the answer (the session stays up; an
error raised here would close it, and the call would read as a lost connection); the
kept login is left as it is (it still does for what it was granted); the wider scope is
kept in the server's record, so the next login asks for it (``tui-agent login NAME``, or
``l`` in the app); and :meth:`StepUp.take_refused` tells the call path once, which names
it: "X needs more scope (S) for TOOL".
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from tui_agent.tools.auth.callback import LoginError

if TYPE_CHECKING:
    import httpx2

    from tui_agent.tools.auth.storage import TokenSlot

WANTED = "wanted_scope"
"""The field of a server's record that keeps a scope a step-up asked for."""


def insufficient_scope(response: httpx2.Response) -> str | None:
    """The scope a ``403 insufficient_scope`` challenge asks for ("" if it names none), or
    None for any other answer."""
    if response.status_code != 403:
        return None
    challenge = response.headers.get("www-authenticate", "")
    if "insufficient_scope" not in challenge:
        return None
    scope = re.search(r'scope="([^"]*)"', challenge)
    return scope.group(1) if scope else ""


def wider(*scopes: str | None) -> str:
    """The union of space-separated scopes, in the order first seen."""
    return " ".join(dict.fromkeys(s for scope in scopes for s in (scope or "").split()))


def wanted_scope(slot: TokenSlot) -> str | None:
    """A scope a step-up asked for and the kept login may not hold."""
    found = slot.store.record(slot.key).get(WANTED)
    return found if isinstance(found, str) and found else None


class StepUp:
    """Mixed in before the SDK's ``OAuthClientProvider`` (see the module's docstring);
    ``slot`` is the server's record."""

    slot: TokenSlot
    refused_scope: str | None = None
    """The scope of the last step-up that could not run, until :meth:`take_refused`."""
    stepping_up = False
    """A step-up login is under way (its failure keeps the tokens)."""

    def take_refused(self) -> str | None:
        """The scope a refused step-up asked for, once (None: there was none)."""
        scope, self.refused_scope = self.refused_scope, None
        return scope

    async def async_auth_flow(self, request: httpx2.Request
                              ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)  # type: ignore[misc]
        wanted: str | None = None
        try:
            outgoing = await flow.__anext__()
            while True:
                answer = yield outgoing
                if outgoing is request:
                    wanted = insufficient_scope(answer)
                    self.stepping_up = wanted is not None
                outgoing = await flow.asend(answer)
        except StopAsyncIteration:
            return
        except LoginError:
            if wanted is None:
                raise
            self.refused_scope = wanted or "a wider scope"
            self.slot.store.update(self.slot.key, **{WANTED: wider(wanted_scope(self.slot),
                                                                   wanted)})
        finally:
            self.stepping_up = False
            await flow.aclose()
        yield request  # once more as it was: the server's refusal is the answer

    def _loaded_lacks_wanted(self, context: Any) -> bool:
        """The kept tokens lack a scope a step-up asked for earlier."""
        wanted = wanted_scope(self.slot)
        tokens = context.current_tokens
        if wanted is None or tokens is None:
            return False
        return not set(wanted.split()) <= set((tokens.scope or "").split())
