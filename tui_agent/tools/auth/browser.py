"""Opening a link in the user's browser: Python's ``webbrowser`` (so ``$BROWSER`` is
honoured), in a thread of its own, because it waits for a console browser or a
``$BROWSER`` command to exit, and a login's loopback listener must answer that browser
meanwhile.

A login shows its link and opens it without waiting (:func:`open_in_browser`): the
login ends when the browser comes back. A link a server asks the person to open
(URL elicitation) needs to know whether a browser took it (:func:`opened_in_browser`):
where none did, the front end keeps the link in sight instead of telling the server the
person went there."""

from __future__ import annotations

import contextlib
import threading
import webbrowser

WAIT = 5.0
"""Seconds :func:`opened_in_browser` waits for ``webbrowser`` to say; a browser command
still running after that is taken to have the link (a console browser showing it)."""


def open_in_browser(url: str) -> None:
    """Open ``url`` in the user's browser, without waiting; where there is none, the link
    the front end shows is the way."""
    threading.Thread(target=_open, args=(url,), name="browser", daemon=True).start()


def opened_in_browser(url: str, wait: float = WAIT) -> bool:
    """Open ``url`` in the user's browser and say whether one took it: False where none
    is found (no display, no ``$BROWSER``) or the one found failed. Blocks up to
    ``wait`` seconds: call it from a thread."""
    said: list[bool] = []
    thread = threading.Thread(target=lambda: said.append(_open(url)), name="browser",
                              daemon=True)
    thread.start()
    thread.join(wait)
    return said[0] if said else True


def _open(url: str) -> bool:
    with contextlib.suppress(Exception):
        return webbrowser.open(url)
    return False
