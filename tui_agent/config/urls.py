"""A server's URL as tui-agent checks and prints it: whether it is an http(s) URL with a
host (and a port that is a number), and the URL with its credentials hidden.

Two rules, for two uses:

- :func:`mask_url` is how a URL is *printed*: the password of ``user:password@``, a user
  name given alone or with an empty password (``https://ghp_...@host``,
  ``https://ghp_...:@host``: git and curl send it as the credential, so it is one) and
  every query and fragment value (``?token=``, ``?workspace=``, ``#access_token=``: a
  printed URL shows the names of its parameters, never their values). A malformed URL
  (``http://[::1``, which ``urlsplit`` refuses) is hidden the same way.
- :func:`url_secrets` is what the configuration *masks everywhere* (prompts, replies,
  the session file, any error that quotes the URL in its own way:
  :mod:`tui_agent.config.printable`): the password (or the user name standing for
  one), and only the query and fragment values whose parameter name says they are
  secret (:data:`SECRET_PARAM`: ``token``, ``api_key``, ``sig``, ``code``...). An
  ordinary value (``?workspace=production``, ``?version=2025-03-26``) is no secret: as
  one, every "production" in the conversation would read ``***``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

HIDDEN = "********"
"""What stands for a hidden value."""

SECRET_PARAM = re.compile(
    r"token|key|secret|passw|auth(?!or)|credential|session|signature|cookie|bearer"
    r"|(?:^|[^a-z0-9])(?:sig|pass|pwd|code|jwt)(?:$|[^a-z0-9])", re.IGNORECASE)
"""A query or fragment parameter whose value is a secret (``token``, ``access_token``,
``api_key``, ``apikey``, ``X-Amz-Signature``, ``X-Amz-Credential``, Azure's ``sig``,
OAuth's ``code``, ``password``, ``pass``): a whole word for the short names, so that
``design`` or ``zipcode`` is not one."""
NOT_SECRET_PARAM = re.compile(r"(?:type|hint|expires|expires_in|expiry)$", re.IGNORECASE)
"""What a secret's name may begin with and still name no secret: OAuth's
``token_type=bearer`` (as a secret, every "bearer" would be masked), ``expires_in``."""
_AUTHORITY = re.compile(r"^([^/]*//)([^/]*)")
"""The ``scheme://`` and the authority (``user:password@host:port``) of a URL whose
query and fragment were taken off."""


def is_http_url(text: str) -> bool:
    """An http(s) URL with a host and, if any, a port that is a number."""
    try:
        parts = urlsplit(text)
        _ = parts.port  # raises ValueError for a port that is no number
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 address)
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _split(url: str) -> tuple[str, str, str, str, str]:
    """``url`` as (before the authority, user info, the rest up to the query, query,
    fragment), split as ``urlsplit`` splits (the first ``#``, then the first ``?``; the
    user info ends at the last ``@`` of the authority), also when ``urlsplit`` refuses
    it; the user info is ``""`` when there is none, and the query and fragment keep
    their ``?`` and ``#``."""
    head, hash_, fragment = url.partition("#")
    head, mark, query = head.partition("?")
    found = _AUTHORITY.match(head)
    userinfo, at, _ = found.group(2).rpartition("@") if found else ("", "", "")
    if not at:
        return head, "", "", mark + query, hash_ + fragment
    start = found.end(1) if found else 0
    return (head[:start], userinfo, head[start + len(userinfo):], mark + query,
            hash_ + fragment)


def _pairs(text: str) -> list[tuple[str, str]]:
    """The ``name=value`` pairs of a query or fragment (its ``?`` or ``#`` taken off)."""
    return [(name, value) for name, eq, value in
            (p.partition("=") for p in text[1:].split("&")) if eq]


def _hide_values(text: str) -> str:
    """A query or fragment (with its ``?`` or ``#``) with every value hidden."""
    if not text:
        return text
    return text[0] + "&".join(f"{p.partition('=')[0]}={HIDDEN}" if "=" in p else p
                              for p in text[1:].split("&"))


def mask_url(url: str) -> str:
    """``url`` as it may be printed: its password (or the user name standing for one)
    and every query and fragment value hidden."""
    before, userinfo, rest, query, fragment = _split(url)
    if userinfo:
        user, _, password = userinfo.partition(":")
        userinfo = f"{user}:{HIDDEN}" if password else HIDDEN
    return before + userinfo + rest + _hide_values(query) + _hide_values(fragment)


def _secret_param(name: str) -> bool:
    """Whether a query or fragment parameter of this name holds a secret."""
    return bool(SECRET_PARAM.search(name)) and not NOT_SECRET_PARAM.search(name)


def url_secrets(url: str | None) -> list[str]:
    """The credentials of ``url``, to mask wherever they may show: its password (or its
    user name when the password is missing or empty) and the query and fragment values
    whose parameter name is a secret's (:data:`SECRET_PARAM`), each also as the URL
    spells it encoded. Every other query value is hidden only in a printed URL
    (:func:`mask_url`). The caller drops values too short to mask."""
    if not url:
        return []
    _, userinfo, _, query, fragment = _split(url)
    user, _, password = userinfo.partition(":")
    values = [v for name, v in (*_pairs(query), *_pairs(fragment))
              if _secret_param(unquote(name))]
    found = [v for v in [password or user, *values] if v]
    return found + [d for d in (unquote(v) for v in found) if d not in found]
