"""A server's URL as tui-agent checks and prints it: whether it is an http(s) URL with a
host (and a port that is a number), and the URL with its credentials hidden: the
password of ``user:password@``, a user name given alone (``https://ghp_...@host``: git
and curl send it as the credential, so it is one) and every query value (``?token=``,
``?api_key=``, ``?sig=``: a printed URL shows the names of its parameters, never their
values). A malformed URL (``http://[::1``, which ``urlsplit`` refuses) is no URL, and
printing it still hides a ``user:password@`` and a ``token@``.

:func:`url_secrets` gives the same values to the configuration's secrets, so that an
error that quotes the URL in its own way is masked too
(:mod:`tui_agent.config.printable`)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

HIDDEN = "********"
"""What stands for a hidden value."""


def is_http_url(text: str) -> bool:
    """An http(s) URL with a host and, if any, a port that is a number."""
    try:
        parts = urlsplit(text)
        _ = parts.port  # raises ValueError for a port that is no number
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 address)
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def mask_url(url: str) -> str:
    """``url`` as it may be printed: its password and query values hidden."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # malformed: only what looks like credentials is hidden
        url = re.sub(r"(//[^/\s:@]*):[^/\s@]*@", rf"\1:{HIDDEN}@", url)
        return re.sub(r"//[^/\s:@]+@", f"//{HIDDEN}@", url)
    if password:
        url = url.replace(f":{password}@", f":{HIDDEN}@")
    elif _lone_user(parts.netloc):
        url = url.replace(f"//{parts.netloc.rpartition('@')[0]}@", f"//{HIDDEN}@", 1)
    if parts.query:
        url = url.replace(parts.query, "&".join(
            f"{p.partition('=')[0]}={HIDDEN}" if "=" in p else p
            for p in parts.query.split("&")))
    return url


def _lone_user(netloc: str) -> bool:
    """``netloc`` holds a user name without a password (``token@host``)."""
    userinfo, at, _ = netloc.rpartition("@")
    return bool(at and userinfo and ":" not in userinfo)


def url_secrets(url: str | None) -> list[str]:
    """The values :func:`mask_url` hides in ``url``: its password (or its user name when
    it has no password) and its query values, each also as the URL spells it encoded."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    user = parts.netloc.rpartition("@")[0] if _lone_user(parts.netloc) else ""
    values = [p.partition("=")[2] for p in parts.query.split("&") if "=" in p]
    found = [v for v in [password or "", user, *values] if v]
    return found + [d for d in (unquote(v) for v in found) if d not in found]
