"""One big JSON message read as its bytes arrive, each long string in it held once.

The message is split as it comes into a skeleton (everything but its long strings) and
its long strings (over :data:`LONG` bytes). The skeleton grows with the chunks and is
parsed by ``json`` at the end, with a short placeholder where each long string was; a long
string's bytes are collected on their own and made into its ``str`` as soon as it ends,
holding at most about twice that string at once (the bytes, then the text). A long string
that repeats one read before in the same message (FastMCP sends a tool's text as a text
block and again as ``structuredContent``) is compared with it as it arrives, its bytes let
go chunk by chunk, and the one ``str`` serves both: the message costs its data once.

Only the scan for where strings start and end is ours (a regular expression and
``bytes.find``, so the bytes are walked in C); what a value is, and whether the message is
JSON at all, is decided by ``json`` (the skeleton by ``json.loads``, each long string by
its ``scanstring``), so the values are exactly what ``json.loads`` gives the whole line, and
bad JSON is refused with the same kind of error. A lone surrogate written as an escape,
which ``json`` lets through and no UTF-8 encoder takes afterwards (the session file, a
script's process), is refused, as the SDK's own parse does. The comparison lives in
:mod:`.jsonsame`; the transport that feeds this is :mod:`.stdio`.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from tui_agent.tools.transports.jsonsame import Same

LONG = 64 * 1024
"""Bytes over which a string is kept out of the skeleton (and made a ``str`` of its own
as soon as it ends)."""
WINDOW = LONG
"""Bytes scanned at a time: a string longer than :data:`LONG` is still open at the end of
some window, where it is taken out of the skeleton."""
SAME_AS = 4
"""Long strings read before in the message that a new one is compared with."""

_OUTSIDE = re.compile(rb'(?:[^"]++|"(?:[^"\\]++|\\.)*+")*+', re.S)
"""Structure and whole strings: stops at the quote of a string still open, or the end."""
_INSIDE = re.compile(rb'(?:[^"\\]++|\\.)*+', re.S)
"""A string's content: stops at its closing quote, a backslash that ends the window, or
the end."""
ESCAPED_QUOTES = 16
"""Escaped quotes in a window after which its string is scanned by :data:`_INSIDE` (a
Python loop per quote is slow when there are many)."""
_QUOTE, _BACKSLASH = 0x22, 0x5C
_CONTROL = re.compile(rb"[\x00-\x1f]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE = re.compile("[\ud800-\udfff]")
"""A surrogate left in decoded text (a pair of escapes becomes one character)."""
_MARK = "\x00" + os.urandom(8).hex() + ":"
"""What a long string's placeholder in the skeleton starts with (a server cannot know it)."""
_MARK_JSON = b'"\\u0000' + _MARK[1:].encode()


class LoneSurrogate(ValueError):
    """A string in the message holds half of a surrogate pair, which is not text."""


class JsonStream:
    """One message's bytes, fed in pieces (:meth:`feed`), then its values (:meth:`values`).

    Feeding never raises: the first error is kept and raised by :meth:`values`, so the
    reader goes on to the end of the line and the next message."""

    def __init__(self) -> None:
        self.skeleton = bytearray()
        self.strings: list[str] = []
        self.error: Exception | None = None
        self._open = -1  # where the string being read starts in the skeleton, or -1
        self._escaped = False  # the next byte is escaped (the window ended on a backslash)
        self._long: LongString | None = None
        self._long_start = 0

    def feed(self, data: bytes | bytearray) -> None:
        if self.error is not None:
            return
        try:
            for start in range(0, len(data), WINDOW):
                self._scan(data, start, min(len(data), start + WINDOW))
        except (ValueError, RecursionError) as exc:
            self.error = exc
            self.skeleton = bytearray()
            self.strings = []
            self._long = None

    def values(self) -> Any:
        """The message's values, or the error that says why it is not JSON."""
        if self.error is not None:
            raise self.error
        if self._long is not None or self._open >= 0:
            start = self._long_start if self._long is not None else self._open
            raise json.JSONDecodeError("Unterminated string starting at", "", start)
        surrogate = _SURROGATE_ESCAPE.search(self.skeleton) is not None
        text = self.skeleton.decode()
        self.skeleton = bytearray()
        values = json.loads(text)
        del text
        if surrogate:
            refuse_lone_surrogates(values)
        strings, self.strings = self.strings, []
        return put_back(values, strings) if strings else values

    def _scan(self, data: Any, pos: int, end: int) -> None:
        while pos < end:
            if self._long is not None:
                pos = self._long_part(data, pos, end)
            else:
                pos = self._structure(data, pos, end)

    def _structure(self, data: Any, pos: int, end: int) -> int:
        """Skeleton up to ``end``; a string still open there that has grown past
        :data:`LONG` is taken out of it."""
        start, base = pos, len(self.skeleton) - pos
        while pos < end:
            if self._open < 0:
                pos = _OUTSIDE.match(data, pos, end).end()  # type: ignore[union-attr]
                if pos == end:
                    break
                self._open = base + pos
                pos += 1
            pos = self._through_string(data, pos, end)
            if pos < 0:
                break
            self._open = -1
        self.skeleton += memoryview(data)[start:end]
        if self._open >= 0 and len(self.skeleton) - self._open > LONG:
            self._take_long()
        return end

    def _through_string(self, data: Any, pos: int, end: int) -> int:
        """Past the closing quote of the string being read, or -1 if it goes on after
        ``end`` (noting a backslash that ends the window)."""
        if self._escaped:
            if pos == end:
                return -1
            pos += 1
            self._escaped = False
        start = pos
        for _ in range(ESCAPED_QUOTES):  # memchr, quicker than the pattern for most text
            quote: int = data.find(b'"', pos, end)
            if quote < 0:
                self._escaped = _backslashes(data, start, end) % 2 == 1
                return -1
            if _backslashes(data, start, quote) % 2 == 0:
                return quote + 1
            pos = quote + 1  # an escaped quote
        pos = _INSIDE.match(data, pos, end).end()  # type: ignore[union-attr]
        if pos == end:
            return -1
        if data[pos] == _QUOTE:
            return pos + 1
        self._escaped = True  # a backslash, the window's last byte
        return -1

    def _take_long(self) -> None:
        self._long_start = self._open
        self._long = LongString(self.strings[-SAME_AS:])
        with memoryview(self.skeleton) as view:
            self._long.add(view[self._open + 1:])
        del self.skeleton[self._open:]
        self._open = -1

    def _long_part(self, data: Any, pos: int, end: int) -> int:
        assert self._long is not None
        after = self._through_string(data, pos, end)
        self._long.add(memoryview(data)[pos:end if after < 0 else after - 1])
        if after < 0:
            return end
        value = self._long.finish()
        self._long = None
        self.skeleton += _MARK_JSON + str(len(self.strings)).encode() + b'"'
        self.strings.append(value)
        return after


def _backslashes(data: bytes | bytearray, start: int, end: int) -> int:
    """The run of backslashes that ends at ``end`` (not counting any before ``start``,
    where a string's content, or what follows an escaped byte, begins)."""
    at = end
    while at > start and data[at - 1] == _BACKSLASH:
        at -= 1
    return end - at


class LongString:
    """A long string's content as it arrives: compared with the strings it may repeat
    while one of them still matches, otherwise collected, then made its ``str``."""

    def __init__(self, candidates: list[str]) -> None:
        self.same = [Same(c, ascii) for c in reversed(candidates)
                     for ascii in ((False,) if c.isascii() else (False, True))]
        self.raw: bytearray | None = None if self.same else bytearray(b'"')
        self.fed = 0

    def add(self, piece: memoryview) -> None:
        if self.raw is None:
            alive = [s for s in self.same if s.compare(piece)]
            if alive:
                self.same = alive
                self.fed += len(piece)
                return
            self._collect()
        assert self.raw is not None
        self.raw += piece

    def _collect(self) -> None:
        """From comparing to collecting: the bytes matched so far are the candidate's."""
        self.raw = bytearray(b'"') + self.same[0].prefix(self.fed)
        self.same = []

    def finish(self) -> str:
        if self.raw is None:
            done = next((s.value for s in self.same if s.done()), None)
            if done is not None:
                return done
            self._collect()  # it ended before the strings it matched so far
        raw, self.raw = self.raw, None
        assert raw is not None
        raw += b'"'
        return make_string(raw)


def make_string(raw: bytearray) -> str:
    """The ``str`` of a JSON string's bytes (quotes included; ``raw`` is emptied): the
    text is decoded, and unescaped by ``json``'s own ``scanstring`` if need be, the bytes
    let go in between, so at most about twice the string is alive at once."""
    surrogate = _SURROGATE_ESCAPE.search(raw) is not None
    if b"\\" not in raw and _CONTROL.search(raw) is None:
        with memoryview(raw) as view:
            value: str = codecs.utf_8_decode(view[1:-1], "strict", True)[0]
        raw.clear()
        return value
    text = raw.decode()
    raw.clear()
    value, end = scanstring(text, 1, True)
    if end != len(text):  # cannot happen: the scan ended the string at its last quote
        raise json.JSONDecodeError("Extra data", text, end)
    del text
    if surrogate and _LONE.search(value):
        raise LoneSurrogate("a string holds a lone surrogate (\\ud800-\\udfff), which is "
                            "not text")
    return value


def refuse_lone_surrogates(values: Any) -> None:
    """Raise :class:`LoneSurrogate` if any string in ``values`` (keys too) holds one.
    Iterative: ``json`` took the nesting, which may be deeper than Python's recursion."""
    stack = [values]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _LONE.search(node):
                raise LoneSurrogate("a string holds a lone surrogate (\\ud800-\\udfff), "
                                    "which is not text")
        elif isinstance(node, dict):
            stack.extend(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def put_back(values: Any, strings: list[str]) -> Any:
    """``values`` with each placeholder replaced by its long string (in place)."""

    def long(item: Any) -> str | None:
        if type(item) is str and item.startswith(_MARK):
            return strings[int(item[len(_MARK):])]
        return None

    found = long(values)
    if found is not None:
        return found
    left = len(strings)
    stack = [values]
    while stack and left:
        node = stack.pop()
        if isinstance(node, dict):
            marked = sum(type(k) is str and k.startswith(_MARK) for k in node)
            if marked:  # a long key (rare): the dict is rebuilt, its order kept
                renamed = {(long(k) or k): v for k, v in node.items()}
                left -= marked
                node.clear()
                node.update(renamed)
            pairs: Any = node.items()
        elif isinstance(node, list):
            pairs = enumerate(node)
        else:
            continue
        for key, item in list(pairs):
            if (found := long(item)) is not None:
                node[key] = found
                left -= 1
            elif isinstance(item, dict | list):
                stack.append(item)
    return values
