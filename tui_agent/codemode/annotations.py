"""JSON Schema to Python annotations for the stubs: ``{"type": "integer"}`` is ``int``,
an enum a ``Literal`` (of its exact values; one with floats, or with more than
:data:`MAX_ENUM` values, its values' types), ``$ref``, ``anyOf`` and ``allOf`` resolved,
``prefixItems`` a ``tuple``, nesting cut at a few levels (``Any`` beyond), and the shape
of a structured result (``{a: int, b?: str}``). Every annotation is valid under
``mypy --strict``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tui_agent.codemode.names import one_line

MAX_LITERAL = 60
MAX_DEPTH = 3
MAX_ENUM = 20
"""Values an enum may have and still be a ``Literal``; more are their type, with a note."""
LITERAL_TYPES = (str, int, bool, type(None))
"""What ``typing.Literal`` may hold (of JSON's values): no float, no list, no dict."""
JSON_TYPES = {str: "str", bool: "bool", int: "int", float: "float", type(None): "None",
              list: "list[Any]", dict: "dict[str, Any]"}


def literal(value: Any) -> str:
    """A Python literal for a JSON value, exactly (``repr`` escapes a newline or a control
    character, so nothing is rewritten); long ones become ``...``."""
    try:
        text = repr(value) if not isinstance(value, (dict, list)) else \
            repr(json.loads(json.dumps(value)))
    except (TypeError, ValueError):
        return "..."
    return text if len(text) <= MAX_LITERAL and "\n" not in text else "..."


def enum_annotation(values: list[Any]) -> str:
    """``Literal[...]`` of the values when ``Literal`` can hold them all, else the union
    of their types (a float, a long string, more than :data:`MAX_ENUM` values)."""
    shown = [literal(v) for v in values]
    if len(values) <= MAX_ENUM and "..." not in shown and \
            all(isinstance(v, LITERAL_TYPES) for v in values):
        return f"Literal[{', '.join(dict.fromkeys(shown))}]"
    return union(JSON_TYPES.get(type(v), "Any") for v in values)


class Types:
    """Maps one tool's schema (with its ``$defs``) to annotations."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = {}
        for name in ("$defs", "definitions"):
            if isinstance(root.get(name), dict):
                self.defs.update(root[name])

    def resolve(self, schema: Any,
                seen: frozenset[str] = frozenset()) -> tuple[Any, frozenset[str]]:
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"].rsplit("/", 1)[-1]
            if ref in seen or ref not in self.defs:
                return {}, seen
            seen = seen | {ref}
            schema = {**self.defs[ref], **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema, seen

    def annotation(self, schema: Any, depth: int = 0, seen: frozenset[str] = frozenset()) -> str:
        schema, seen = self.resolve(schema, seen)
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return "Any"
        if "const" in schema:
            return enum_annotation([schema["const"]])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return enum_annotation(schema["enum"])
        for combo in ("anyOf", "oneOf"):
            if isinstance(schema.get(combo), list):
                return union(self.annotation(s, depth + 1, seen) for s in schema[combo])
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            return self.annotation(self.merged(schema, seen), depth, seen)
        kind = schema.get("type")
        if isinstance(kind, list):
            out = union(self.annotation({**schema, "type": k}, depth, seen) for k in kind)
        else:
            out = self._one(kind, schema, depth, seen)
        return union([out, "None"]) if schema.get("nullable") is True else out

    def _one(self, kind: Any, schema: dict[str, Any], depth: int, seen: frozenset[str]) -> str:
        simple = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
                  "null": "None"}
        if kind in simple:
            return simple[kind]
        if kind == "array" or "prefixItems" in schema:
            items = schema.get("items")
            inner = self.annotation(items, depth + 1, seen) if isinstance(items, dict) else "Any"
            prefix = schema.get("prefixItems")
            if isinstance(prefix, list) and prefix:
                first = [self.annotation(p, depth + 1, seen) for p in prefix]
                rest = [] if items is False else [f"*tuple[{inner}, ...]"]
                return f"tuple[{', '.join(first + rest)}]"
            return f"list[{inner}]"
        if kind == "object" or "properties" in schema:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and not schema.get("properties"):
                return f"dict[str, {self.annotation(extra, depth + 1, seen)}]"
            return "dict[str, Any]"
        return "Any"

    def merged(self, schema: dict[str, Any], seen: frozenset[str]) -> dict[str, Any]:
        """An ``allOf`` as one schema: the properties and the required of every part; of
        other keywords, the first part's word."""
        out: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        props: dict[str, Any] = dict(out.get("properties") or {})
        required = list(out.get("required") or [])
        for part in schema["allOf"]:
            part, _ = self.resolve(part, seen)
            if not isinstance(part, dict):
                continue
            part = self.merged(part, seen) if isinstance(part.get("allOf"), list) else part
            props.update(part.get("properties") or {})
            required += [r for r in part.get("required") or [] if r not in required]
            for word, value in part.items():
                out.setdefault(word, value)
        if props:
            out["properties"], out["required"] = props, required
        return out

    def shape(self, schema: Any, depth: int = 0, seen: frozenset[str] = frozenset()) -> str | None:
        """``{a: int, b?: str}`` for an object with properties (nested up to a few levels)."""
        schema, seen = self.resolve(schema, seen)
        if isinstance(schema, dict) and isinstance(schema.get("allOf"), list):
            schema = self.merged(schema, seen)
        if not isinstance(schema, dict) or depth >= MAX_DEPTH:
            return None
        if schema.get("type") == "array":
            inner = self.shape(schema.get("items"), depth, seen)
            return f"[{inner}, ...]" if inner else None
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return None
        required = set(schema.get("required") or [])
        fields = []
        for name, sub in list(props.items())[:15]:
            inner = self.shape(sub, depth + 1, seen)
            mark = "" if name in required else "?"
            fields.append(f"{one_line(str(name), 40)}{mark}: "
                          f"{inner or self.annotation(sub, depth + 1, seen)}")
        more = ", ..." if len(props) > 15 else ""
        return "{" + ", ".join(fields) + more + "}"


def union(parts: Iterable[str]) -> str:
    seen: list[str] = []
    for part in parts:
        for piece in part.split(" | "):
            if piece not in seen:
                seen.append(piece)
    if "Any" in seen:
        return "Any"
    return " | ".join(seen) or "Any"
