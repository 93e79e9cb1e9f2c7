"""How a token is named without being kept: base64url(SHA-256(token)), the ``ath`` of a
DPoP proof (RFC 9449 section 4.2), and what a server's record keeps to say which token is
bound to its key (:mod:`~tui_agent.tools.auth.dpop`, read by
:meth:`~tui_agent.tools.auth.storage.TokenStore.status`)."""

from __future__ import annotations

import base64
import hashlib


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 section 2)."""
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def token_hash(access_token: str) -> str:
    # A token is ASCII (RFC 6750); UTF-8 is the same bytes for it, and cannot fail on one
    # that is not.
    return b64url(hashlib.sha256(access_token.encode("utf-8")).digest())
