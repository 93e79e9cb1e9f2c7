"""``${VAR}`` and ``${VAR:-default}`` expansion, and the record of what was secret.

Only the places a server or the model reads get expanded (command, args, env,
url, headers, api_base, api_key); the raw text stays in the file. Values that
came from the environment into env, headers, url or api_key are remembered as
secrets so that logs, session files and output can mask them.
"""

from __future__ import annotations

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


def mask(text: str, secrets: set[str] | frozenset[str]) -> str:
    """Replace every known secret in ``text`` with ``***``.

    Longest first, so a secret that contains another is masked whole."""
    for value in sorted(secrets, key=len, reverse=True):
        if value in text:
            text = text.replace(value, "***")
    return text
