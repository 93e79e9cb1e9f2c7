"""A scope step-up that cannot happen now: the server answers a request with ``403
insufficient_scope`` and the scope it wants (RFC 6750 section 3.1, the MCP spec's
step-up), and the wider login cannot run (nobody to show it) or fails (the authorization
server refuses it, or does not answer).

:class:`StepUp` is mixed into the browser login's provider (the SDK's, which runs the
wider login itself when it can). When it cannot: the request goes out once more as it
was, so the transport gets the server's refusal as the answer (the session stays up; an
error raised here would close it, and the call would read as a lost connection); the
kept login is left as it is (it still does for what it was granted); the wider scope is
kept in the server's record, so the next login asks for it (``tui-agent login NAME``, or
``l`` in the app); and the call whose request it was learns of it through
:data:`REFUSED`, and names it: "X needs more scope (S) for TOOL", and why its login
failed. An authorization server that does not answer ends the request with the
connection error itself (``httpx`` raises it outside the flow, which cannot send the
request again, and the SDK's transport closes the session with it): that call learns all
the same which step was not reached and why (the error the HTTP client kept on the step's
request, :mod:`~tui_agent.tools.transports.http`), and the session restarts.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.config.urls import mask_url
from tui_agent.tools.auth.callback import LoginError, NeedsLogin
from tui_agent.tools.errors import LOGIN_STEP, UNANSWERED, describe_error

if TYPE_CHECKING:
    import httpx2

    from tui_agent.tools.auth.storage import TokenSlot

WANTED = "wanted_scope"
"""The field of a server's record that keeps a scope a step-up asked for."""


@dataclass(frozen=True)
class Refused:
    """A step-up that could not run: the ``scope`` it asked for, and why its login failed
    (None: no login could be shown)."""

    scope: str
    why: str | None = None

    def told(self, server: str, tool: str) -> str:
        """What the call of ``tool`` on ``server`` fails with."""
        if self.why is None:
            return (f"{server} needs more scope ({self.scope}) for {tool}: run "
                    f"'tui-agent login {server}'")
        return (f"{server} needs more scope ({self.scope}) for {tool}, and the login for it "
                f"failed: {self.why}")


REFUSED: ContextVar[list[Refused] | None] = ContextVar("tui_agent_step_up_refused",
                                                       default=None)
"""Set by a call around its request: the step-ups of that request that could not run. The
auth flow of a request runs in the context of the call that sent it (the SDK's transports
carry the sender's context to the task that posts the request), so calls made in parallel
each learn of their own, never of another's."""

Words = Callable[[Exception, "httpx2.Request | None", "httpx2.Response | None"],
                 "LoginError | None"]
"""A login's failure in words (``Worded.word``): the error, the request it ended at and that
request's answer; None for a failure that is not a login's."""


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


def unanswered(sent: httpx2.Request) -> str:
    """A login step's request ``sent`` that got no answer, in the words a start that failed
    there is told in (with the error the transport kept on it, if any)."""
    failure = sent.extensions.get(UNANSWERED)
    if isinstance(failure, Exception):
        return describe_error(failure)
    step = sent.extensions.get(LOGIN_STEP, "the login")
    return f"could not reach {step} at {mask_url(str(sent.url))}"


def wider(*scopes: str | None) -> str:
    """The union of space-separated scopes, in the order first seen."""
    return " ".join(dict.fromkeys(s for scope in scopes for s in (scope or "").split()))


def wanted_scope(slot: TokenSlot) -> str | None:
    """A scope a step-up asked for and the kept login may not hold."""
    found = slot.store.record(slot.key).get(WANTED)
    return found if isinstance(found, str) and found else None


class StepUp:
    """Mixed in before the SDK's ``OAuthClientProvider`` (see the module's docstring);
    ``slot`` is the server's record; ``words`` tells the login's failures (set by
    :func:`~tui_agent.tools.auth.providers.provider`)."""

    slot: TokenSlot
    stepping_up = False
    """A step-up login is under way (its failure keeps the tokens)."""
    asked_login = False
    """The server answered a request with 401 (it uses OAuth) in this run."""
    words: Words | None = None
    """How the login's failures are told (else a :class:`LoginError` as it is)."""

    def _word(self, exc: Exception, sent: httpx2.Request | None,
              answer: httpx2.Response | None) -> LoginError | None:
        if self.words is not None:
            return self.words(exc, sent, answer)
        return exc if isinstance(exc, LoginError) else None

    async def async_auth_flow(self, request: httpx2.Request
                              ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)  # type: ignore[misc]
        wanted: str | None = None
        outgoing: httpx2.Request | None = None
        answer: httpx2.Response | None = None
        try:
            outgoing = await flow.__anext__()
            while True:
                answer = yield outgoing
                if outgoing is request:
                    self.asked_login |= answer.status_code == 401
                    wanted = insufficient_scope(answer)
                    self.stepping_up = wanted is not None
                outgoing = await flow.asend(answer)
        except StopAsyncIteration:
            return
        except GeneratorExit:  # a request of the flow failed outside it (nothing answered)
            if wanted is not None and outgoing is not None and outgoing is not request:
                self._refused(wanted, unanswered(outgoing))
            raise
        except Exception as exc:
            failure = self._word(exc, outgoing, answer)
            if wanted is None or failure is None:
                raise
            self._refused(wanted, None if isinstance(exc, NeedsLogin) else str(failure))
        finally:
            self.stepping_up = False
            await flow.aclose()
        yield request  # once more as it was: the server's refusal is the answer

    def _refused(self, wanted: str, why: str | None) -> None:
        """The step-up for ``wanted`` could not run: the next login asks for it, and the
        call learns why."""
        self.slot.store.update(self.slot.key, **{WANTED: wider(wanted_scope(self.slot),
                                                               wanted)})
        told = REFUSED.get()
        if told is not None:
            told.append(Refused(wanted or "a wider scope", why))

    def _loaded_lacks_wanted(self, context: Any) -> bool:
        """The kept tokens lack a scope a step-up asked for earlier."""
        wanted = wanted_scope(self.slot)
        tokens = context.current_tokens
        if wanted is None or tokens is None:
            return False
        return not set(wanted.split()) <= set((tokens.scope or "").split())
