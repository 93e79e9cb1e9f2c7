"""Permission rules matched against calls: ``[permissions] allow/ask/deny``.

A rule (grammar in :mod:`tui_agent.config.rule_text`) names tools by a glob on
``mcp__SERVER__TOOL`` and may hold conditions on the call's arguments, all of which must
hold. A value is matched as its string form (a number or a bool as its JSON text); a
path-like condition (the glob or the value starts with ``/``, ``~`` or ``./``, or holds a
``/``) has ``~`` expanded and both sides normalised (``..`` resolved on the text, the
filesystem never followed), and there ``*`` stops at ``/`` while ``**`` crosses it. An
argument the call does not pass never matches.

Speed: each rule's name glob is one compiled regex, indexed by the server it names
literally (``mcp__git__*``: only ``git``'s calls try it), and the rules whose names match a
tool are kept per ``(server, tool)`` (a :class:`RuleSet` is rebuilt, never edited, when
a rule is added or removed), so a decision only tests the conditions of the few rules
that name the tool (``tests/bench/bench_rules.py``).
"""

from __future__ import annotations

import heapq
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from tui_agent.config.rule_text import (
    KINDS,
    PREFIX,
    RuleEntry,
    RuleSyntaxError,
    parse_rule,
    quote_value,
)
from tui_agent.core.permissions.names import rule_name

LONGEST = 200
"""Arguments longer than this (as text) are left out of a rule "always" writes."""


@lru_cache(maxsize=4096)
def glob_regex(glob: str, *, path: bool = False) -> re.Pattern[str]:
    """``glob`` as a regex over the whole text: ``*`` ``?`` ``[...]``; with ``path``,
    ``*`` and ``?`` stay inside one ``/`` segment, ``**`` crosses them and a trailing
    ``/**`` matches the folder itself too."""
    out: list[str] = []
    i = 0
    one = "[^/]" if path else "."
    while i < len(glob):
        char = glob[i]
        if path and glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("(?:/.*)?")
            i += 3
        elif path and glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append(one + "*")
            i += 1
        elif char == "?":
            out.append(one)
            i += 1
        elif char == "[" and (end := glob.find("]", i + 2)) > 0:
            body = glob[i + 1:end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as exc:  # a character class such as [z-a]
        raise RuleSyntaxError(f"the glob {glob!r} does not compile: {exc}") from None


def _path_like(text: str) -> bool:
    return text.startswith(("/", "~", "./")) or "/" in text


def _normal(text: str) -> str:
    """``~`` expanded and normalised; a leading ``//`` (which POSIX's normpath keeps, and
    the kernel reads as ``/``) made one ``/``."""
    normal = os.path.normpath(os.path.expanduser(text))
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def _text(value: Any) -> str:
    """An argument's string form: a string as it is, anything else as its JSON text."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True, slots=True)
class Condition:
    arg: str
    glob: str
    plain: re.Pattern[str] = field(init=False, repr=False, compare=False)
    """The glob over a value as it is."""
    path: re.Pattern[str] = field(init=False, repr=False, compare=False)
    """The glob (``~`` expanded, normalised) over a path-like value, normalised too."""
    path_like: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # compiled once: a decision only matches
        glob = self.glob if self.glob.startswith("**") else _normal(self.glob)
        object.__setattr__(self, "plain", glob_regex(self.glob))
        object.__setattr__(self, "path", glob_regex(glob, path=True))
        object.__setattr__(self, "path_like", _path_like(self.glob))

    def holds(self, arguments: Mapping[str, Any] | None, *, wide: bool = False) -> bool:
        """Whether the call's argument meets the condition. Whether it is matched as a
        path is the rule's to say (its glob is path-like), never the value's. ``wide``
        (deny and ask rules): what cannot be known holds (a relative path against an
        absolute glob: the server resolves it from a folder of its own), and a list holds
        when any item does; otherwise (allow rules) every item must, and a relative path
        never meets an absolute glob."""
        if arguments is None or self.arg not in arguments:
            return False
        value = arguments[self.arg]
        if isinstance(value, list) and value:
            found = (self._one(item, wide) for item in value)
            return any(found) if wide else all(found)
        return self._one(value, wide)

    def _one(self, value: Any, wide: bool) -> bool:
        text = _text(value)
        if not self.path_like:
            return self.plain.match(text) is not None
        if self.glob.startswith(("/", "~")) and not text.startswith(("/", "~")):
            return wide  # relative: against which folder, only the server knows
        return self.path.match(_normal(text)) is not None


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule of the config (or made this session), ready to match."""

    entry: RuleEntry
    name: re.Pattern[str]
    conditions: tuple[Condition, ...]

    @classmethod
    def of(cls, entry: RuleEntry) -> Rule:
        """``entry`` compiled; raises :class:`~tui_agent.config.rule_text.RuleSyntaxError`."""
        parsed = parse_rule(entry.text)
        return cls(entry, glob_regex(parsed.name),
                   tuple(Condition(a, g) for a, g in parsed.conditions))

    @property
    def kind(self) -> str:
        return self.entry.kind

    @property
    def text(self) -> str:
        return self.entry.text

    def where(self) -> str:
        """``FILE:LINE`` (the home folder as ``~``), or empty for a session's rule."""
        return place(self.entry)

    def said(self) -> str:
        """What decided, for a :class:`~tui_agent.core.permissions.policy.Judgement`'s
        ``by``: ``deny rule "TEXT" (FILE:LINE)``."""
        where = self.where()
        return f'{self.kind} rule "{self.text}"' + (f" ({where})" if where else "")

    def holds(self, arguments: Mapping[str, Any] | None) -> bool:
        wide = self.kind != "allow"  # a doubt denies or asks; it never allows
        return all(c.holds(arguments, wide=wide) for c in self.conditions)


def place(entry: RuleEntry) -> str:
    """Where a rule is written, for people: ``~/.config/tui-agent/config.toml:12``."""
    if entry.file is None:
        return ""
    text = str(entry.file)
    home = str(Path.home())
    if home not in ("", "/") and text.startswith(home + os.sep):
        text = "~" + text[len(home):]
    return f"{text}:{entry.line}" if entry.line else text


class RuleFiles(Protocol):
    """Writes the rules made in a session to the config files (supplied by the
    composition root; each method raises, naming the file, when it cannot)."""

    def add(self, kind: str, text: str) -> RuleEntry:
        """Write the rule to the user's config; returns it with its file and line."""
        ...

    def remove(self, entry: RuleEntry) -> None:
        """Take the rule out of its file."""
        ...


class RuleSet:
    """Every rule in force, by kind, with the rules naming each tool remembered."""

    def __init__(self, entries: Iterable[RuleEntry] = ()) -> None:
        self.rules = [Rule.of(e) for e in entries]
        self._by_server: dict[str, dict[str | None, list[tuple[int, Rule]]]] = {
            k: {} for k in KINDS}
        for at, rule in enumerate(self.rules):  # by the server it names (None: a glob)
            self._by_server[rule.kind].setdefault(_server(rule.entry.text), []).append(
                (at, rule))
        self._named: dict[tuple[str, str, str], list[Rule]] = {}

    def __bool__(self) -> bool:
        return bool(self.rules)

    def first(self, kind: str, server: str, tool: str,
              arguments: Mapping[str, Any] | None) -> Rule | None:
        """The first ``kind`` rule matching a call of ``tool`` with ``arguments``."""
        key = (kind, server, tool)
        named = self._named.get(key)
        if named is None:
            name = rule_name(server, tool)
            index = self._by_server.get(kind, {})
            candidates = heapq.merge(index.get(server, []), index.get(None, []),
                                     key=lambda pair: pair[0])  # in the files' order
            named = [r for _, r in candidates if r.name.match(name)]
            self._named[key] = named
        return next((r for r in named if r.holds(arguments)), None)

    def entries(self) -> list[RuleEntry]:
        return [r.entry for r in self.rules]


def _server(text: str) -> str | None:
    """The server a rule names literally (``mcp__git__*`` names ``git``), or None when
    its server part holds a wildcard (``mcp__*__delete``) or has no end."""
    name = parse_rule(text).name[len(PREFIX):]
    server, sep, _ = name.partition("__")
    return server if sep and not any(c in server for c in "*?[") else None


def names_match(globs: Iterable[str], server: str, tool: str) -> bool:
    """Whether a glob of ``globs`` (names only, as ``read_only`` writes them) names the
    tool."""
    name = rule_name(server, tool)
    return any(glob_regex(parse_rule(g).name).match(name) for g in globs)


def rule_for(server: str, tool: str, arguments: Mapping[str, Any] | None = None
             ) -> tuple[str, list[str]]:
    """The rule "always" writes for a call: the whole tool (``arguments`` None), or the
    tool with these arguments' values, each matched exactly (glob characters escaped).
    Returns it and the arguments left out, with why (not a plain value, or longer than
    :data:`LONGEST`): the rule then allows any value of those."""
    name = rule_name(server, tool)
    if arguments is None:
        return name, []
    parts: list[str] = []
    skipped: list[str] = []
    for arg, value in arguments.items():
        if value is not None and not isinstance(value, (str, int, float, bool)):
            skipped.append(f"{arg} (not a plain value)")
            continue
        text = _text(value)
        if len(text) > LONGEST:
            skipped.append(f"{arg} (longer than {LONGEST} characters)")
            continue
        parts.append(f"{arg}={quote_value(_escape(text))}")
    return (f"{name}({', '.join(parts)})" if parts else name), skipped


def scalar_arguments(arguments: Mapping[str, Any] | None) -> bool:
    """Whether a call has an argument a rule can hold (a plain value, not too long)."""
    return bool(arguments) and any(
        value is None or isinstance(value, (str, int, float, bool))
        and len(_text(value)) <= LONGEST for value in (arguments or {}).values())


def _escape(text: str) -> str:
    """``text`` as a glob matching only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)
