"""Make untrusted text safe for a terminal.

Model replies, tool output and tool descriptions may carry escape sequences
(cursor moves that spoof a prompt, OSC 52 clipboard writes, OSC 8 links),
C0/C1 controls, and bidi, zero-width and other format characters that make text read
differently from what it is. ``clean`` removes all of them and keeps newlines
and tabs. It lives in :mod:`tui_agent.config.printable` (the one sanitiser of every
output, importable from every layer) and is re-exported here beside the streaming form.
"""

from __future__ import annotations

import functools
import re

from tui_agent.config.printable import clean as clean

_INTRODUCERS = "[\x1b\x9b\x90\x9d\x9e\x9f\x98]"
_COMPLETE = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*(?![\[\]PX^_])[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x90\x9d\x9e\x9f\x98][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
)


class StreamCleaner:
    """:func:`clean` for text that arrives in pieces (a streamed reply): an escape sequence
    split across two pieces is removed whole, instead of leaving its tail as text. Only an
    unfinished sequence is held back, and never more than :attr:`HOLD` characters."""

    HOLD = 256

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        text = self._held + text
        self._held = ""
        introducers, complete = _patterns()
        starts = [m.start() for m in introducers.finditer(text)]
        if starts:
            last = starts[-1]
            if not complete.match(text, last) and len(text) - last <= self.HOLD:
                text, self._held = text[:last], text[last:]
        return clean(text)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return clean(held)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The escape sequences' introducers, and a whole sequence, compiled the first time a
    reply streams (not on the way to the app's first frame)."""
    return re.compile(_INTRODUCERS), re.compile(_COMPLETE)


SLICE = 1 << 20


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (a lone surrogate counts as the ``?`` it would be
    replaced by), without a copy of a long text: ASCII is counted as it is (CPython knows
    a string is ASCII without reading it), anything else a slice at a time."""
    if text.isascii():
        return len(text)
    return sum(len(text[at:at + SLICE].encode("utf-8", "replace"))
               for at in range(0, len(text), SLICE))


def first_line(text: str) -> str:
    """The first line of ``text`` with words in it, cleaned (empty when there is none: a
    text of only control or invisible characters has none)."""
    for line in clean(text).splitlines():
        if line.strip():
            return line.strip()
    return ""
