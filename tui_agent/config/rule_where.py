"""The rules of one config file's ``[permissions]``, each checked and given its line.

Every rule is read (:func:`~tui_agent.config.rule_text.parse_rule`) when its file is
loaded, so a rule that does not parse refuses the whole config with the file, the line and
what is wrong, before anything is applied. ``read_only`` takes the same names, without
conditions (plan mode asks only which tool it is).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_agent.config.errors import ConfigError
from tui_agent.config.locate import toml_line
from tui_agent.config.rule_text import KINDS, RuleEntry, RuleSyntaxError, parse_rule

RULE_KEYS = frozenset(("permissions", kind) for kind in KINDS)
"""The keys whose lists add up across layers instead of the later replacing the earlier."""


def layer_rules(section: Mapping[str, Any], text: str, file: Path) -> list[RuleEntry]:
    """The rules ``section`` (one file's ``[permissions]``, as set) holds, deny first,
    each with its line in ``text``. Raises :class:`ConfigError` listing every rule that
    does not parse."""
    problems: list[str] = []
    found: list[RuleEntry] = []
    for kind in (*KINDS, "read_only"):
        after = toml_line(text, ("permissions", kind)) or 0
        for rule in section.get(kind, ()):
            line = rule_line(text, rule, after)
            after = line or after
            where = f"line {line}: " if line else ""
            try:
                parsed = parse_rule(rule)
            except RuleSyntaxError as exc:
                problems.append(f"{where}permissions.{kind}: rule {rule!r}: {exc}")
                continue
            if kind == "read_only":
                if parsed.conditions:
                    problems.append(f"{where}permissions.read_only: {rule!r}: read_only "
                                    "takes tool names without (ARG=...) conditions")
                continue
            found.append(RuleEntry(kind, rule, file, line))
    if problems:
        raise ConfigError(problems, file)
    return found


def rule_line(text: str, rule: str, after: int = 0) -> int | None:
    """The first line from ``after`` (1-based; the list's key line) holding ``rule`` as a
    TOML string writes it (literal or with escapes), or None."""
    forms = {json.dumps(rule, ensure_ascii=False), f"'{rule}'"}
    lines = text.splitlines()
    for number in range(max(after, 1), len(lines) + 1):
        if any(form in lines[number - 1] for form in forms):
            return number
    return None
