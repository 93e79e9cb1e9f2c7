"""Whether a long JSON string arriving in pieces is one already read, without building it.

A string's JSON is compared, piece by piece, with the JSON ``json.dumps`` writes for the
string it may repeat (made a slice at a time, never whole). Servers escape the way
``json`` does (only ``"``, ``\\`` and control characters, with non-ASCII characters as
they are, as pydantic's serialiser, which FastMCP uses, and ``JSON.stringify`` do, or as
``\\u`` escapes, as ``json.dumps`` does by default), so the same text arrives as the same
bytes; one escaped otherwise is only not recognised (it is then read as a string of its
own), never taken for another. Used by :mod:`.jsonstream`.
"""

from __future__ import annotations

import json

PIECE = 1 << 16
"""Characters of the known string turned into JSON at a time."""


def json_bytes(text: str, ascii: bool = False) -> bytes:
    """``text`` as the inside of a JSON string (UTF-8), as ``json.dumps`` writes it."""
    return json.dumps(text, ensure_ascii=ascii)[1:-1].encode(errors="surrogatepass")


class Same:
    """The JSON of ``value`` (non-ASCII as ``\\u`` escapes if ``ascii``), compared with
    the pieces of a string as they arrive."""

    def __init__(self, value: str, ascii: bool = False) -> None:
        self.value = value
        self.ascii = ascii
        self._next = 0  # characters of ``value`` made into JSON so far
        self._ahead = b""  # the JSON of the last slice made
        self._at = 0  # bytes of ``_ahead`` compared

    def compare(self, piece: memoryview) -> bool:
        """Whether ``piece`` is what comes next (if not, this object is spent)."""
        at, size = 0, len(piece)
        while at < size:
            if self._at == len(self._ahead):
                if self._next >= len(self.value):
                    return False  # the new string is longer
                self._ahead = json_bytes(self.value[self._next:self._next + PIECE], self.ascii)
                self._next += PIECE
                self._at = 0
            take = min(size - at, len(self._ahead) - self._at)
            # bytes, not memoryviews: their == compares byte by byte, 30 times slower
            if bytes(piece[at:at + take]) != self._ahead[self._at:self._at + take]:
                return False
            at += take
            self._at += take
        return True

    def done(self) -> bool:
        """Everything compared so far matched, and nothing of ``value`` is left."""
        return self._at == len(self._ahead) and self._next >= len(self.value)

    def prefix(self, size: int) -> bytearray:
        """The first ``size`` bytes of the JSON of ``value`` (what a string that matched
        that far held)."""
        out = bytearray()
        for start in range(0, len(self.value), PIECE):
            if len(out) >= size:
                break
            out += json_bytes(self.value[start:start + PIECE], self.ascii)
        del out[size:]
        return out
