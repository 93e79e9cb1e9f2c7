"""Opening a login page: Python's ``webbrowser`` (so ``$BROWSER`` is honoured), in a
thread of its own, because it waits for a console browser or a ``$BROWSER`` command to
exit, and the login's loopback listener must answer that browser meanwhile."""

from __future__ import annotations

import contextlib
import threading
import webbrowser


def open_in_browser(url: str) -> None:
    """Open ``url`` in the user's browser, without waiting; where there is none, the link
    the front end shows is the way."""
    threading.Thread(target=_open, args=(url,), name="browser", daemon=True).start()


def _open(url: str) -> None:
    with contextlib.suppress(Exception):
        webbrowser.open(url)
