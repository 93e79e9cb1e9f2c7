"""Tool names the model sees: ``<server>__<tool>``, as OpenAI's function names allow.

Names are cut to ``[a-zA-Z0-9_-]{1,64}``. When two tools end up with the same name
after that (``get.file`` and ``get_file``, or a long prefix cut short), every one
of them gets a suffix from a hash of its real server and tool: the result does not
depend on which server started first, and no tool hides another.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable

MAX_LEN = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
SEPARATOR = "__"


def _digest(server: str, tool: str) -> str:
    return hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]


def _suffixed(base: str, server: str, tool: str) -> str:
    return f"{base[:MAX_LEN - 9]}_{_digest(server, tool)}"


def catalog_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A unique, valid model-facing name for each ``(server, tool)``."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for server, tool in pairs:
        raw = f"{server}{SEPARATOR}{tool}"
        base = _INVALID.sub("_", raw)
        if len(base) > MAX_LEN:
            base = _suffixed(base, server, tool)
        groups[base].append((server, tool))
    names: dict[tuple[str, str], str] = {}
    for base, members in groups.items():
        if len(members) == 1:
            names[members[0]] = base
        else:
            for server, tool in members:
                names[(server, tool)] = _suffixed(base, server, tool)
    return names
