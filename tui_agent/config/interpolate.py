"""``${VAR}`` and ``${VAR:-default}`` expansion, and the record of what was secret.

Only the places a server or the model reads get expanded (command, args, env,
url, headers, api_base, api_key, the strings in a model's params); the raw text
stays in the file. Values that came from the environment into env, headers, url,
api_key or params are remembered as secrets so that logs, session files and output
can mask them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
MIN_SECRET_LEN = 6
"""Shorter values (``1``, ``true``) would mask innocent text everywhere."""


class UnsetVariable(Exception):
    """``${NAME}`` with no default named a variable that is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass
class Expander:
    """Expands variables from ``env`` and collects the secret values it produced."""

    env: Mapping[str, str]
    secrets: set[str] = field(default_factory=set)

    def expand(self, text: str, *, secret: bool = False) -> str:
        def one(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            value = self.env.get(name)
            if value is None or (value == "" and default is not None):
                if default is None:
                    raise UnsetVariable(name)
                return default
            if secret and len(value) >= MIN_SECRET_LEN:
                self.secrets.add(value)
            return value

        return _VAR.sub(one, text)


@functools.lru_cache(maxsize=8)
def _json_forms(secrets: frozenset[str]) -> frozenset[str]:
    import json  # not on the way to the app's first frame

    forms = set(secrets)
    for s in secrets:
        forms.add(json.dumps(s)[1:-1])
        forms.add(json.dumps(s, ensure_ascii=False)[1:-1])
    return frozenset(forms)


_LEARNED: set[str] = set()
"""Secrets known only at run time (OAuth tokens): every mask masks them too."""
MIN_LEARNED = 8


def learn_secret(value: str | None) -> None:
    """Mask ``value`` from now on wherever anything is masked (an OAuth access or refresh
    token, as soon as it is obtained or read from the store)."""
    if value and len(value) >= MIN_LEARNED:
        _LEARNED.add(value)


def mask_json(line: str, secrets: frozenset[str]) -> str:
    """:func:`mask` for JSON text, where a secret may appear escaped."""
    every = secrets | _LEARNED
    return mask(line, _json_forms(every)) if every else line


def mask(text: str, secrets: set[str] | frozenset[str]) -> str:
    """Replace every known secret in ``text`` (and every learned one) with ``***``.

    Longest first, so a secret that contains another is masked whole."""
    for value in sorted(secrets | _LEARNED, key=len, reverse=True):
        if value in text:
            text = text.replace(value, "***")
    return text


_NAMES = r"(?:token|api[_-]?key|access[_-]?key|private[_-]?key|secret(?:[_-]?key)?|password|passwd)"
_VALUE = r"""(?!\*\*\*|\$\{)[^\s"'&,;)\]}>]{6,}"""
"""A value as long as a secret can be (:data:`MIN_SECRET_LEN`): ``token: No such file`` in
an error about a token file is not one."""
SAID_SECRETS = re.compile(
    # key=value or key: value where the key names a secret (token, api_key, password...),
    # the key possibly quoted (JSON, YAML); the value up to a space, quote or separator.
    rf"""(?i)(?P<key>(?<!\{{)\b[\w.-]*{_NAMES}["']?\s*[=:]\s*["']?){_VALUE}"""
    # Authorization: Bearer xyz, Authorization: Basic xyz, Proxy-Authorization: xyz
    rf"""|(?P<scheme>\b(?:bearer|basic)\s+){_VALUE}"""
    rf"""|(?P<header>\bauthorization["']?\s*:\s*["']?)(?!bearer\b|basic\b){_VALUE}""")
"""Secrets a program writes in free text, found by what precedes them (never a
``${VAR}`` reference, which names a secret without holding it)."""


def _unsaid(match: re.Match[str]) -> str:
    lead = match.group("key") or match.group("scheme") or match.group("header")
    return f"{lead}***"


def mask_said(text: str, secrets: set[str] | frozenset[str]) -> str:
    """:func:`mask` for what a server wrote (its stderr, its errors, its log lines):
    also a value written after a secret's name (``token=abc``, ``api_key: abc``,
    ``password=abc``) or an ``Authorization`` header's credential (``Bearer abc``), which
    no configuration names."""
    return SAID_SECRETS.sub(_unsaid, mask(text, secrets))


class StreamMasker:
    """:func:`mask` for text that arrives in pieces: a secret split across two pieces
    is still masked. Only a tail that could be the start of a secret is held back
    until the next piece (or :meth:`flush`)."""

    def __init__(self, secrets: set[str] | frozenset[str]) -> None:
        self._secrets = frozenset(secrets)
        self._hold = max((len(s) for s in secrets), default=1) - 1
        self._buffer = ""

    def feed(self, text: str) -> str:
        secrets = self._secrets | _LEARNED
        if not secrets:
            return text
        buffer = mask(self._buffer + text, secrets)
        keep = 0
        hold = max(self._hold, max((len(s) for s in _LEARNED), default=1) - 1)
        for size in range(min(len(buffer), hold), 0, -1):
            tail = buffer[-size:]
            if any(s.startswith(tail) for s in secrets):
                keep = size
                break
        self._buffer = buffer[len(buffer) - keep:] if keep else ""
        return buffer[:len(buffer) - keep]

    def flush(self) -> str:
        out, self._buffer = self._buffer, ""
        return out
