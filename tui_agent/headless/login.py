"""Browser logins from a plain terminal: the login page is opened in the browser (Python's
``webbrowser``, so ``$BROWSER`` is honoured) and its URL printed too, to copy into a
browser elsewhere (an SSH session). Without a terminal nobody could log in: a server that
needs it is reported, and the run goes on without it."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import webbrowser
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from tui_agent.tools.text import clean
from tui_agent.wiring.build import open_logins

if TYPE_CHECKING:
    from tui_agent.tools.auth.logins import Logins
    from tui_agent.tools.auth.storage import Login


def show_login(err: IO[str]) -> Callable[[str, str], None]:
    """``(server, url)`` -> the URL on ``err`` and in the browser."""
    def show(server: str, url: str) -> None:
        err.write(f"tui-agent: log in to {clean(server)} in your browser (if it does not "
                  f"open, copy this link into one):\n  {clean(url)}\n")
        err.flush()
        # A thread: webbrowser waits for a console browser or a $BROWSER command to exit,
        # and the login's listener must answer it meanwhile.
        threading.Thread(target=_open, args=(url,), name="browser", daemon=True).start()

    return show


def _open(url: str) -> None:
    with contextlib.suppress(Exception):  # no browser here: the printed link is the way
        webbrowser.open(url)


def on_a_terminal(err: IO[str] = sys.stderr) -> bool:
    """Whether a person is there to log in (``err`` is a terminal)."""
    isatty = getattr(err, "isatty", None)
    return bool(isatty and isatty())


def terminal_logins(err: IO[str]) -> Logins:
    """The logins of a run on ``err``: a browser login starts by itself when a server asks
    for one and a person is there to do it."""
    here = on_a_terminal(err)
    return open_logins(show_login(err) if here else None, interactive=here)


def describe_login(login: Login | None) -> str:
    """"logged in as CLIENT until TIME", or "not logged in" (never a token)."""
    if login is None:
        return "not logged in"
    who = f" as {clean(login.client_id)}" if login.client_id else ""
    if login.expires_at is None:
        until = ""
    elif login.expired():
        until = " (expired; renewed at the next call)" if login.refreshable else \
            " (expired: log in again)"
    else:
        until = " until " + time.strftime("%Y-%m-%d %H:%M", time.localtime(login.expires_at))
    scope = f", scope {clean(login.scope)}" if login.scope else ""
    return f"logged in{who}{until}{scope}"
