"""A tool's value on its way into the script's process, as JSON written in pieces.

A script that calls a tool returning megabytes must not make this process hold that value
several times over (the value, its JSON, the message around it, its bytes, the pipe's
buffer): :func:`pieces` gives the same text as ``json.dumps(value, ensure_ascii=False)``,
a long string cut into slices of at most :data:`PIECE` characters, so the reply is
measured and then written slice by slice, each slice sent on before the next is made.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

PIECE = 1 << 18
"""Characters of a string encoded at a time (each slice's JSON is about as long)."""


def pieces(value: Any) -> Iterator[str]:
    """``json.dumps(value, ensure_ascii=False)``, in pieces whose concatenation is that."""
    if isinstance(value, str) and len(value) > PIECE:
        yield '"'
        for start in range(0, len(value), PIECE):
            yield json.dumps(value[start:start + PIECE], ensure_ascii=False)[1:-1]
        yield '"'
    elif isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        yield "{"
        for n, (key, item) in enumerate(value.items()):
            yield (", " if n else "") + json.dumps(key, ensure_ascii=False) + ": "
            yield from pieces(item)
        yield "}"
    elif isinstance(value, list | tuple) and value:
        yield "["
        for n, item in enumerate(value):
            if n:
                yield ", "
            yield from pieces(item)
        yield "]"
    else:
        yield json.dumps(value, ensure_ascii=False)


def size(value: Any) -> int:
    """Bytes of ``value`` as JSON (UTF-8), counted one piece at a time."""
    return sum(len(piece.encode()) for piece in pieces(value))
