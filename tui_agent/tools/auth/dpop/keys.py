"""A DPoP key (RFC 9449): the key pair one server's tokens are bound to, kept as a private
JWK beside those tokens, and the proofs it signs.

A proof is a JWT of type ``dpop+jwt`` whose header carries the public key (``jwk``) and
whose claims say which request it is for (``htm``, ``htu``), when (``iat``), a unique
``jti``, the server's ``nonce`` when it gave one, and for a resource request ``ath``, the
hash of the access token sent with it. The authorization server binds a token to the key's
RFC 7638 thumbprint (``cnf.jkt``); only proofs signed by that key then make the token
usable, so a token that leaks from a log is worth nothing without the key.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tui_agent.config.interpolate import learn_secret
from tui_agent.tools.auth.token_hash import b64url, token_hash

PREFERRED = "ES256"
"""The algorithm asked for wherever the server offers it (small keys, quick to sign)."""
OURS = ("ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256")
"""Algorithms tui-agent can make a key for, in its order of preference."""
THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"),
                      "OKP": ("crv", "kty", "x")}
"""The members of a public JWK its RFC 7638 thumbprint is taken over, by key type."""
PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi")


def choose_alg(offered: list[str] | None) -> str | None:
    """The algorithm to make a key for among those the server ``offered`` (ES256 unless only
    others are); None when it offers none tui-agent can sign with. ``None`` offered (the
    server did not say): ES256."""
    if offered is None:
        return PREFERRED
    if PREFERRED in offered:
        return PREFERRED
    return next((alg for alg in offered if alg in OURS), None)


def thumbprint(public_jwk: dict[str, Any]) -> str:
    """The JWK's SHA-256 thumbprint (RFC 7638), what a bound token's ``cnf.jkt`` holds."""
    members = THUMBPRINT_MEMBERS[public_jwk["kty"]]
    canonical = json.dumps({k: public_jwk[k] for k in members}, separators=(",", ":"),
                           sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def target_uri(url: str) -> str:
    """``htu``: the request's URI without its query and fragment (RFC 9449 section 4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DpopKey:
    """One key pair and the algorithm it signs with."""

    def __init__(self, alg: str, private: Any) -> None:
        self.alg, self.private = alg, private
        self.public_jwk = _algorithm(alg).to_jwk(private.public_key(), as_dict=True)
        for member in PRIVATE_MEMBERS:  # the public JWK must hold nothing private
            self.public_jwk.pop(member, None)
        self.thumbprint = thumbprint(self.public_jwk)

    @classmethod
    def generate(cls, alg: str) -> DpopKey:
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

        curves = {"ES256": ec.SECP256R1(), "ES384": ec.SECP384R1(), "ES512": ec.SECP521R1()}
        private: Any
        if alg in curves:
            private = ec.generate_private_key(curves[alg])
        elif alg == "EdDSA":
            private = ed25519.Ed25519PrivateKey.generate()
        else:
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        key = cls(alg, private)
        key.learn()
        return key

    @classmethod
    def from_record(cls, kept: object) -> DpopKey | None:
        """The key kept in a server's record (``{"alg", "jwk"}``); None when there is none
        or it does not load (a new one is made then)."""
        if not isinstance(kept, dict):
            return None
        alg, jwk = kept.get("alg"), kept.get("jwk")
        if alg not in OURS or not isinstance(jwk, dict):
            return None
        try:
            private = _algorithm(alg).from_jwk(jwk)
        except (ValueError, KeyError, TypeError, Exception):  # PyJWT's InvalidKeyError too
            return None
        if not hasattr(private, "public_key"):  # a public JWK: no use for signing
            return None
        key = cls(alg, private)
        key.learn()
        return key

    def record(self) -> dict[str, Any]:
        """What is kept of the key (the private JWK: it lives with the tokens)."""
        return {"alg": self.alg, "jwk": _algorithm(self.alg).to_jwk(self.private, as_dict=True)}

    def learn(self) -> None:
        """Mask the private members wherever anything is masked (logs, sessions)."""
        private = _algorithm(self.alg).to_jwk(self.private, as_dict=True)
        for member in PRIVATE_MEMBERS:
            learn_secret(private.get(member))

    def proof(self, method: str, url: str, *, access_token: str | None = None,
              nonce: str | None = None) -> str:
        """A fresh proof for one request: ``method`` to ``url``, with the token it carries
        (``ath``) and the server's nonce, if any."""
        import jwt

        claims: dict[str, Any] = {"jti": secrets.token_urlsafe(18), "htm": method.upper(),
                                  "htu": target_uri(url), "iat": int(time.time())}
        if access_token is not None:
            claims["ath"] = token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self.private, algorithm=self.alg,
                          headers={"typ": "dpop+jwt", "jwk": self.public_jwk})


def _algorithm(alg: str) -> Any:
    from jwt.algorithms import get_default_algorithms

    return get_default_algorithms()[alg]
