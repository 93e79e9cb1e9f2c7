"""The text of a permission rule (``[permissions] allow/ask/deny``), read into its parts.

A rule is ``GLOB`` or ``GLOB(ARG=GLOB, ARG=GLOB, ...)``: a glob on the tool's name as
Claude Code writes it (``mcp__SERVER__TOOL``; a rule written as the model sees the tool,
``SERVER__TOOL``, is read as ``mcp__`` + it) and conditions on its arguments. A value may
be quoted, ``"..."`` with ``\\"`` and ``\\\\``, to hold ``,`` ``)`` ``=`` or blanks.

Only the grammar lives here, in the config package, so a rule that does not parse is a
:class:`~tui_agent.config.errors.ConfigError` at load (file and line) like any bad key;
matching rules against calls is the core's job (:mod:`tui_agent.core.permissions.rules`).
Each layer's rules keep their file and line (:class:`RuleEntry`) for ``/permissions`` and
for the ``by`` of every decision a rule makes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PREFIX = "mcp__"
KINDS = ("deny", "ask", "allow")
"""The rule lists of ``[permissions]``, in the order they are checked."""


@dataclass(frozen=True, slots=True)
class RuleText:
    """A rule read: the name glob (always starting ``mcp__``) and its conditions."""

    name: str
    conditions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class RuleEntry:
    """One rule of the config, where it was written: ``kind`` is ``allow``, ``ask`` or
    ``deny``; ``file`` and ``line`` are None for a rule made in this session only."""

    kind: str
    text: str
    file: Path | None = None
    line: int | None = None


class RuleSyntaxError(ValueError):
    """What is wrong with a rule's text, in words (the caller adds where it is)."""


def parse_rule(text: str) -> RuleText:
    """``text`` read as a rule; raises :class:`RuleSyntaxError` saying what is wrong."""
    stripped = text.strip()
    if not stripped:
        raise RuleSyntaxError("the rule is empty")
    head, paren, rest = stripped.partition("(")
    name = head.strip()
    if not name:
        raise RuleSyntaxError("no tool name before '('")
    if any(c.isspace() for c in name) or ")" in name:
        raise RuleSyntaxError(f"the tool name {name!r} holds a blank or ')'; a condition "
                              "is written NAME(ARG=GLOB)")
    if not name.startswith(PREFIX):
        name = PREFIX + name
    if not paren:
        return RuleText(_classes_checked(name))
    conditions = _conditions(rest)
    for _, glob in conditions:
        _classes_checked(glob)
    return RuleText(_classes_checked(name), conditions)


def _classes_checked(glob: str) -> str:
    """``glob``, once each ``[...]`` class in it is one a regex takes (``[z-a]`` is not:
    refused here, with the rule's file and line, not at the first call)."""
    at = glob.find("[")
    while at >= 0:
        end = glob.find("]", at + 2)
        if end < 0:
            break
        body = glob[at + 1:end]
        body = "^" + body[1:] if body.startswith("!") else body
        try:
            re.compile("[" + body.replace("\\", "\\\\") + "]")
        except re.error as exc:
            raise RuleSyntaxError(f"the class [{glob[at + 1:end]}] in {glob!r} is not "
                                  f"valid: {exc}") from None
        at = glob.find("[", end + 1)
    return glob


def _conditions(rest: str) -> tuple[tuple[str, str], ...]:
    """The ``ARG=GLOB, ...)`` after a rule's ``(``."""
    found: list[tuple[str, str]] = []
    pos = 0
    while True:
        pos = _blanks(rest, pos)
        if rest.startswith(")", pos) and not found:
            raise RuleSyntaxError("'()' holds no condition; leave the parentheses out")
        equals = rest.find("=", pos)
        if equals < 0:
            raise RuleSyntaxError(f"condition {rest[pos:].rstrip(')')!r} has no '=' "
                                  "(write ARG=GLOB)")
        arg = rest[pos:equals].strip()
        if not arg or any(c in arg for c in ',()"') or any(c.isspace() for c in arg):
            raise RuleSyntaxError(f"{arg!r} is not an argument name")
        if any(arg == a for a, _ in found):
            raise RuleSyntaxError(f"argument {arg!r} has two conditions")
        value, pos = _value(rest, _blanks(rest, equals + 1))
        found.append((arg, value))
        pos = _blanks(rest, pos)
        if rest.startswith(",", pos):
            pos += 1
            continue
        if rest.startswith(")", pos):
            if rest[pos + 1:].strip():
                raise RuleSyntaxError(f"text after ')': {rest[pos + 1:].strip()!r}")
            return tuple(found)
        raise RuleSyntaxError("no ')' at the end of the conditions")


def _blanks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _value(text: str, pos: int) -> tuple[str, int]:
    """A condition's glob from ``pos``: quoted, or bare up to ``,`` or ``)``."""
    if text.startswith('"', pos):
        out: list[str] = []
        pos += 1
        while pos < len(text):
            char = text[pos]
            if char == "\\" and pos + 1 < len(text) and text[pos + 1] in '"\\':
                out.append(text[pos + 1])
                pos += 2
            elif char == '"':
                return "".join(out), pos + 1
            else:
                out.append(char)
                pos += 1
        raise RuleSyntaxError('a quoted value has no closing \'"\'')
    end = pos
    while end < len(text) and text[end] not in ",)":
        if text[end] in '"=(':
            raise RuleSyntaxError(f"{text[end]!r} in an unquoted value; quote the value "
                                  '("...")')
        end += 1
    value = text[pos:end].strip()
    if not value:
        raise RuleSyntaxError("a condition has no value (write ARG=GLOB, or ARG=\"\")")
    return value, end


def quote_value(value: str) -> str:
    """``value`` as a rule writes it: bare when it can be, else quoted."""
    if value and value == value.strip() and value.isprintable() and not any(
            c in value for c in ',()"=\\'):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
