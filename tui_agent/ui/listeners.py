"""What the backend tells the app while it runs, and what the app shows for it: a server
changed state (the status bar's count, the servers screen), wrote a log line (the
servers screen catches up, throttled), changed a resource attached earlier (it goes
again with the next message), or wants a login page opened.

:class:`~tui_agent.ui.chat.ChatApp` holds one :class:`Listeners`, which registers
itself with the backend (``Runtime``) once the config is loaded. The turn is in
``turn.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.tools.text import clean
from tui_agent.ui.widgets.status import ServerCount

if TYPE_CHECKING:
    from tui_agent.ui.host import ChatHost
    from tui_agent.wiring.runtime import Runtime

LOG_REFRESH_EVERY = 0.2
"""Seconds between two refreshes of the servers screen for log lines (at most)."""


class Listeners:
    """The backend's callbacks, turned into what ``app`` shows."""

    def __init__(self, app: ChatHost) -> None:
        self.app = app
        self._log_refresh_due = False

    def attach(self, backend: Runtime) -> None:
        backend.listeners.append(self.server_changed)
        backend.log_listeners.append(self.server_logged)
        backend.resource_listeners.append(self.resource_changed)
        backend.login_pages.append(self.login_page)

    def refresh_servers(self) -> None:
        self.app.status.servers = ServerCount.of([(s.state, s.tools)
                                                  for s in self.app.backend.statuses()])

    def server_changed(self, _status: object) -> None:
        self.refresh_servers()
        refresh = getattr(self.app.screen, "refresh_data", None)
        if refresh is not None:
            refresh()

    def resource_changed(self, server: str, uri: str) -> None:
        """A resource attached earlier changed: it goes again with the next message."""
        app = self.app
        ref = f"{server}:{uri}"
        if ref not in app.attachments:
            app.attachments.append(ref)
            app.show_pending()
            app.run_worker(app.transcript.note(
                f"{clean(ref)} changed: its new content goes with your next message"),
                group="notes")

    def server_logged(self, _line: object) -> None:
        """A server's log line: the servers screen, if shown, catches up (at most five
        times a second, however fast a server logs)."""
        if self._log_refresh_due or getattr(self.app.screen, "refresh_data", None) is None:
            return
        self._log_refresh_due = True

        def refresh() -> None:
            self._log_refresh_due = False
            data = getattr(self.app.screen, "refresh_data", None)
            if data is not None:
                data()

        self.app.set_timer(LOG_REFRESH_EVERY, refresh)

    def login_page(self, server: str, url: str) -> None:
        """A login asked for on the servers screen: its page opens in the browser, and the
        link goes into the conversation too (to copy, over SSH)."""
        app = self.app
        app.notify(f"log in to {server} in your browser", title="login", markup=False)
        app.run_worker(app.transcript.note(f"log in to {server}: {url}"), group="notes")
        self.server_changed(None)  # the servers screen says the login waits
