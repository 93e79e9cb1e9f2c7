"""Logging in from the chat app (``l`` on the servers screen), told as it happens: what
``l`` does now (:meth:`AppLogins.login`: it promises no browser, which opens only if the
server asks for a login, and says so then), how that login ended (:meth:`AppLogins.outcome`,
in the words ``tui-agent login`` uses: "logged in to X: ..." or "could not log in to X:
<the step that failed>"), and the login line of a server, which always agrees with its
state (:meth:`AppLogins.status`).

The chat app never opens a browser by itself: only a login a person asked for may show a
page (:meth:`~tui_agent.tools.auth.logins.Logins.allow`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.tools.auth.logins import Logins
    from tui_agent.tools.hub import Hub


class AppLogins:
    """The logins of the app's servers; ``parts`` gives the hub and the logins once the
    servers have started (None before)."""

    def __init__(self, parts: Callable[[], tuple[Hub | None, Logins | None]]) -> None:
        self.parts = parts
        self._asked: dict[str, asyncio.Future[str | None]] = {}

    def login(self, name: str) -> str:
        """Log in to server ``name`` now: it reconnects reading its kept login afresh, and
        its login page is shown if the server asks for a login; or, while that login waits
        for the person, give it up. What happened, in a sentence."""
        hub, logins = self.parts()
        if hub is None or logins is None or name not in hub.connections:
            return f"no server named {name}"
        conn = hub.connections[name]
        if not logins.applies(conn.config):
            return (f"{name} does not log in (only sse and http servers without their own "
                    "Authorization header do)")
        if conn.side.person_busy() and conn.side.cancel_login is not None \
                and conn.side.cancel_login():
            self._asked.pop(name, None)  # the person ended it: nothing more to tell
            return f"the login to {name} is cancelled"
        logins.allow(name)
        logins.reload(name)  # a logout made in another shell is seen now
        asked = self._asked[name] = conn.next_start()

        def settled(_: object) -> None:
            if self._asked.get(name) in (asked, None):  # not a later l's, which may log in
                logins.disallow(name)

        asked.add_done_callback(settled)
        conn.reconnect()
        return f"logging in to {name}…"

    async def outcome(self, name: str) -> tuple[bool, str] | None:
        """Once the login :meth:`login` started has ended: whether it worked, and the
        sentence ``tui-agent login`` would print. None when none was started, or the
        person gave it up."""
        from tui_agent.tools.auth.logins import could_not_log_in, logged_in

        asked = self._asked.get(name)
        if asked is None:
            return None
        error = await asked
        if self._asked.get(name) is not asked:  # given up with l, or another login since
            return None
        del self._asked[name]
        if error is not None:
            return False, could_not_log_in(name, error)
        return True, logged_in(name, self.status(name) or "")

    def status(self, name: str) -> str | None:
        """"logged in as ... until ..." or "not logged in" for a server that logs in, in
        agreement with its state; None for one that does not, and for one that failed
        before it asked for a login (:meth:`Logins.uses_oauth`)."""
        hub, logins = self.parts()
        if hub is None or logins is None or name not in hub.connections:
            return None
        conn = hub.connections[name]
        if not logins.applies(conn.config):
            return None
        if conn.side.person_busy():
            return "logging in, waiting for the browser"
        found = logins.status(conn.config)
        if found is not None:
            return found.describe()
        if conn.state != "connected":  # said only of a server known to use OAuth
            return "not logged in" if logins.uses_oauth(name, conn.config) else None
        if logins.holds_token(name):  # its record went (a logout in another shell)
            return ("logged out, but this connection keeps its login until it reconnects")
        return "none needed (the server asked for no login)"
