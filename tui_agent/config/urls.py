"""A server's URL as tui-agent checks and prints it: whether it is an http(s) URL with a
host (and a port that is a number), and the URL with its password and query values (where
tokens ride) hidden. A malformed URL (``http://[::1``, which ``urlsplit`` refuses) is no
URL, and printing it still hides a ``user:password@``."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

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
    except ValueError:  # malformed: only what looks like a password is hidden
        return re.sub(r"(//[^/\s:@]*):[^/\s@]*@", rf"\1:{HIDDEN}@", url)
    if password:
        url = url.replace(f":{password}@", f":{HIDDEN}@")
    if parts.query:
        url = url.replace(parts.query, "&".join(
            f"{p.partition('=')[0]}={HIDDEN}" if "=" in p else p
            for p in parts.query.split("&")))
    return url


def url_secrets(url: str | None) -> list[str]:
    """The values :func:`mask_url` hides in ``url``: its password and query values."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    values = [p.partition("=")[2] for p in parts.query.split("&") if "=" in p]
    return [v for v in [password or "", *values] if v]
