"""JSON Schema to Python annotations for the stubs: ``{"type": "integer"}`` is ``int``,
an enum a ``Literal``, ``$ref`` and ``anyOf`` resolved, nesting cut at a few levels
(``Any`` beyond), and the shape of a structured result (``{a: int, b?: str}``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tui_agent.codemode.names import one_line

MAX_LITERAL = 60
MAX_DEPTH = 3


def literal(value: Any) -> str:
    """A Python literal for a JSON value; long ones become ``...``."""
    if isinstance(value, str):
        value = one_line(value, MAX_LITERAL)
    try:
        text = repr(value) if not isinstance(value, (dict, list)) else \
            repr(json.loads(json.dumps(value)))
    except (TypeError, ValueError):
        return "..."
    return text if len(text) <= MAX_LITERAL and "\n" not in text else "..."


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
            return f"Literal[{literal(schema['const'])}]"
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            values = [literal(v) for v in schema["enum"][:20]]
            if "..." in values:
                return "Any"
            more = ", ..." if len(schema["enum"]) > 20 else ""
            return f"Literal[{', '.join(values)}{more}]"
        for combo in ("anyOf", "oneOf"):
            if isinstance(schema.get(combo), list):
                return union(self.annotation(s, depth + 1, seen) for s in schema[combo])
        if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            return self.annotation(schema["allOf"][0], depth, seen)
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
        if kind == "array":
            items = schema.get("items")
            inner = self.annotation(items, depth + 1, seen) if isinstance(items, dict) else "Any"
            return f"list[{inner}]"
        if kind == "object" or "properties" in schema:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and not schema.get("properties"):
                return f"dict[str, {self.annotation(extra, depth + 1, seen)}]"
            return "dict[str, Any]"
        return "Any"

    def shape(self, schema: Any, depth: int = 0, seen: frozenset[str] = frozenset()) -> str | None:
        """``{a: int, b?: str}`` for an object with properties (nested up to a few levels)."""
        schema, seen = self.resolve(schema, seen)
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
