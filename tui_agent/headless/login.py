"""Browser logins from a plain terminal: the login page is opened in the browser (Python's
``webbrowser``, so ``$BROWSER`` is honoured) and its URL printed too, to copy into a
browser elsewhere (an SSH session). Without a terminal nobody could log in: a server that
needs it is reported, and the run goes on without it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from tui_agent.tools.auth.browser import open_in_browser
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
        open_in_browser(url)

    return show


def on_a_terminal(err: IO[str] = sys.stderr) -> bool:
    """Whether a person is there to log in (``err`` is a terminal)."""
    isatty = getattr(err, "isatty", None)
    return bool(isatty and isatty())


def terminal_logins(err: IO[str], mode: str = "auto") -> Logins:
    """The logins of a run on ``err``: a browser login starts by itself when a server asks
    for one (or for a wider scope) and ``mode`` allows it: ``auto`` when a person is there
    to do it (``err`` is a terminal), ``browser`` always (a desktop script: the link still
    goes to ``err``), ``never`` not at all."""
    here = on_a_terminal(err) if mode == "auto" else mode == "browser"
    return open_logins(show_login(err) if here else None, interactive=here)


def describe_login(login: Login | None) -> str:
    """What ``servers`` says of a login (never a token)."""
    return clean(login.describe()) if login is not None else "not logged in"
