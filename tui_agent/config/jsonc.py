"""JSON as editors write their settings: with ``//`` and ``/* */`` comments and trailing
commas (VS Code's and Zed's ``settings.json``). Comments and the commas are blanked
out, keeping every line where it was, so the standard parser's line numbers still
point into the file.

The text is read in one pass, left to right (a small state machine: in a string, in a
comment, between tokens), jumping from one character that matters to the next with a
regular expression that never looks back: time is linear in the file's size and the
only copy is the blanked text. (The earlier reader matched strings and comments with
backtracking patterns: 21 s for 125 KB of unclosed ``/*``, 6 GB for a 50 MB string.)
The same pass counts how deep objects and arrays nest: past :data:`MAX_DEPTH` the file
is refused before ``json`` (and the code that walks the result) can recurse that deep.

:func:`read_json` is the one way every JSON config file is parsed (``.mcp.json``,
``--mcp-config``, other clients' files for ``mcp import``): each problem a
:class:`ConfigError` naming the file and, where there is one, the line.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from tui_agent.config.errors import ConfigError

MAX_DEPTH = 100
"""Objects and arrays nested deeper than this are refused (a config holds a handful)."""

_BETWEEN = re.compile(r'["/,\[\]{}]')
"""The characters that matter between tokens."""
_IN_STRING = re.compile(r'["\\]')
_SPACE = re.compile(r"\s*")
_LONG_NUMBER = re.compile(r"\d{4300,}")


def _blank(segment: str) -> str:
    """``segment`` as spaces, its newlines kept."""
    return "\n".join(" " * len(line) for line in segment.split("\n"))


def _string_end(text: str, start: int) -> int:
    """The index after the string whose opening quote is at ``start`` (the end of the
    text when it is never closed: ``json`` then says so, with the line)."""
    i = start + 1
    while True:
        found = _IN_STRING.search(text, i)
        if found is None:
            return len(text)
        if found.group() == '"':
            return found.end()
        i = found.end() + 1  # a backslash: the next character is escaped, whatever it is


def _comment_end(text: str, start: int) -> int | None:
    """The index after the comment that starts at ``start`` (``//`` or ``/*``), or None
    when the ``/`` starts none."""
    kind = text[start + 1:start + 2]
    if kind == "/":
        end = text.find("\n", start)
        return len(text) if end < 0 else end
    if kind == "*":
        end = text.find("*/", start + 2)
        if end < 0:
            raise json.JSONDecodeError("a /* comment is never closed", text, start)
        return end + 2
    return None


def scan(text: str, *, comments: bool = True) -> list[tuple[int, int]]:
    """The spans to blank (comments and trailing commas; none when ``comments`` is
    False, the file being plain JSON), in order. Raises ``json.JSONDecodeError`` for an
    unclosed ``/*`` and for nesting deeper than :data:`MAX_DEPTH`."""
    spans: list[tuple[int, int]] = []
    comma: int | None = None  # a comma not yet known to be trailing
    depth, i, n = 0, 0, len(text)
    while i < n:
        if comma is not None:  # what follows a comma: space, comments, then a token
            space = _SPACE.match(text, i)
            assert space is not None  # \s* matches everywhere
            i = space.end()
            if i >= n:
                break
        else:
            found = _BETWEEN.search(text, i)
            if found is None:
                break
            i = found.start()
        char = text[i]
        if char == "/" and comments:
            end = _comment_end(text, i)
            if end is not None:
                spans.append((i, end))
                i = end
                continue
        if comma is not None:
            if char in "]}":
                spans.append((comma, comma + 1))
            comma = None
        if char == '"':
            i = _string_end(text, i)
            continue
        if char == "," and comments:
            comma = i
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} levels deep",
                                           text, i)
        elif char in "]}":
            depth -= 1
        i += 1
    return spans


def strip(text: str) -> str:
    """``text`` with comments and trailing commas replaced by spaces (newlines kept)."""
    spans = scan(text)
    if not spans:
        return text
    parts, before = [], 0
    for start, end in sorted(spans):  # a trailing comma is found after the comments after it
        parts += [text[before:start], _blank(text[start:end])]
        before = end
    parts.append(text[before:])
    return "".join(parts)


def loads(text: str, *, comments: bool = True) -> Any:
    """Parse JSON (with comments unless ``comments`` is False); raises
    ``json.JSONDecodeError`` (with the position) for every problem, json's own limits
    (an integer of 4,300 digits or more) and nesting past :data:`MAX_DEPTH` included."""
    plain = strip(text) if comments else text
    if not comments:
        scan(text, comments=False)  # the depth check
    try:
        return json.loads(plain)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # int() refusing a number past sys.get_int_max_str_digits()
        long = _LONG_NUMBER.search(plain)
        where = long.start() if long else 0
        digits = len(long.group()) if long else 0
        raise json.JSONDecodeError(f"a number of {digits} digits (Python reads at most "
                                   f"{sys.get_int_max_str_digits()})" if long else str(exc),
                                   text, where) from None
    except RecursionError:  # the depth check should have caught it first
        raise json.JSONDecodeError("nested too deep", text, 0) from None


def read_json(text: str, file: Path, *, comments: bool = False) -> Any:
    """``text``, the contents of ``file``, parsed; raises :class:`ConfigError` naming
    the file and the line and column of the problem. A string holding a lone surrogate
    (``"\\ud800"``, valid JSON but no text) is refused too: it could be neither printed
    nor written to a config file."""
    try:
        data = loads(text, comments=comments)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"line {exc.lineno}, column {exc.colno}: not valid JSON: "
                          f"{exc.msg}", file) from None
    bad = _lone_surrogate(data)
    if bad is not None:
        escape = re.search(rf"\\u{ord(bad):04x}", text, re.IGNORECASE)
        line = f"line {text.count(chr(10), 0, escape.start()) + 1}: " if escape else ""
        raise ConfigError(f"{line}a string holds \\u{ord(bad):04x}, half of a surrogate "
                          "pair, which is no text: not valid in a config", file)
    return data


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string (key or value) of ``value``, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return value[exc.start]
        return None
    items: list[Any] = []
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    for item in items:
        found = _lone_surrogate(item)
        if found is not None:
            return found
    return None
