"""Names and text from a server, made safe for a stub: identifiers that are never a
keyword or a Starlark builtin (:func:`identifier`, unique per scope), one-line comments
(:func:`one_line`) and documentation text (:func:`safe_text`) without control
characters. Everything here takes untrusted input."""

from __future__ import annotations

import hashlib
import keyword
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from tui_agent.tools.text import clean

MAX_COMMENT = 160

# Names a script needs for itself: Starlark's builtins and ours. A server or tool
# called one of these gets a trailing underscore instead of hiding it.
BUILTINS = frozenset([
    "any", "all", "bool", "dict", "dir", "enumerate", "fail", "float", "getattr", "hasattr",
    "hash", "int", "len", "list", "max", "min", "print", "range", "repr", "reversed", "sorted",
    "str", "tuple", "type", "zip", "json", "struct", "map", "filter", "partial", "result",
    "True", "False", "None", "call",
])
STARLARK_KEYWORDS = frozenset([
    "and", "break", "continue", "def", "elif", "else", "for", "if", "in", "lambda", "load",
    "not", "or", "pass", "return", "as", "assert", "async", "await", "class", "del", "except",
    "finally", "from", "global", "import", "is", "nonlocal", "raise", "try", "while", "with",
    "yield",
])


def one_line(text: str | None, limit: int = MAX_COMMENT) -> str:
    """``text`` made safe for a ``#`` comment: no control or format characters, no line
    breaks of any kind, at most ``limit`` characters."""
    if not text:
        return ""
    text = clean(text)
    kept = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
                   for c in text if unicodedata.category(c) != "Cf")
    flat = re.sub(r"\s+", " ", kept).strip()
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def safe_text(text: str | None) -> str:
    """``text`` for ``getToolDocs``: line breaks kept, other controls removed."""
    if not text:
        return ""
    text = clean(text)
    return "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf"))


def identifier(name: str, *, builtins: bool = True) -> str:
    """``name`` as a Starlark/Python identifier that is no keyword and (for globals and
    attributes, not for keyword arguments) hides no builtin."""
    out = re.sub(r"\W", "_", name, flags=re.ASCII) or "_"
    if out[0].isdigit():
        out = "_" + out
    if out in STARLARK_KEYWORDS or keyword.iskeyword(out) or builtins and out in BUILTINS:
        out += "_"
    return out


def unique(names: Iterable[str], *, builtins: bool = True) -> dict[str, str]:
    """An identifier per name; names that collide after cleaning all get a suffix from a
    hash of the original, so the result does not depend on order."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[identifier(name, builtins=builtins)].append(name)
    out: dict[str, str] = {}
    for base, members in groups.items():
        for name in members:
            out[name] = base if len(members) == 1 else \
                f"{base}_{hashlib.sha1(name.encode()).hexdigest()[:6]}"
    return out


def clean_json(value: Any) -> Any:
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    if isinstance(value, dict):
        return {safe_text(str(k)): clean_json(v) for k, v in value.items()}
    return value
