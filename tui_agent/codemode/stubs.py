"""``.pyi`` stubs of MCP tools, generated from their JSON Schemas, for code mode.

The model reads these files (``listToolFiles`` / ``readToolFile``) and then writes
one Starlark script that calls ``server.tool(param=value)``. A stub is valid
Python: each tool is a keyword-only function, required parameters first, optional
ones with their defaults, the description as a one-line comment above it and a
usage line (``# Usage: time.get_current_time(timezone="...")``).

Everything that comes from a server (names, descriptions, defaults, enum values)
is untrusted. Names become identifiers (``[A-Za-z_][A-Za-z0-9_]*``, never a keyword
or a Starlark builtin); descriptions lose control characters and line breaks and
only ever appear after ``#``; literals are written with ``repr``, which escapes
quotes and newlines. Nothing from a server can reach a code position.

This module knows nothing of the chat loop: it takes anything shaped like
:class:`ToolLike`.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tui_agent.tools.text import clean

Level = Literal["server", "tool"]
ROOT = "servers"
MAX_COMMENT = 160
MAX_LITERAL = 60
MAX_DEPTH = 3

# Names a script needs for itself: Starlark's builtins and ours. A server or tool
# called one of these gets a trailing underscore instead of hiding it.
BUILTINS = frozenset([
    "any", "all", "bool", "dict", "dir", "enumerate", "fail", "float", "getattr", "hasattr",
    "hash", "int", "len", "list", "max", "min", "print", "range", "repr", "reversed", "sorted",
    "str", "tuple", "type", "zip", "json", "struct", "map", "filter", "partial", "result",
    "True", "False", "None", "call",
])
STARLARK_KEYWORDS = frozenset([
    "and", "break", "continue", "def", "elif", "else", "for", "if", "in", "lambda", "load",
    "not", "or", "pass", "return", "as", "assert", "async", "await", "class", "del", "except",
    "finally", "from", "global", "import", "is", "nonlocal", "raise", "try", "while", "with",
    "yield",
])


class ToolLike(Protocol):
    """What a stub needs of a tool (``tools.spec.ToolSpec`` is one)."""

    @property
    def server(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> dict[str, Any]: ...


def one_line(text: str | None, limit: int = MAX_COMMENT) -> str:
    """``text`` made safe for a ``#`` comment: no control or format characters, no line
    breaks of any kind, at most ``limit`` characters."""
    if not text:
        return ""
    text = clean(text)
    kept = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
                   for c in text if unicodedata.category(c) != "Cf")
    flat = re.sub(r"\s+", " ", kept).strip()
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def safe_text(text: str | None) -> str:
    """``text`` for ``getToolDocs``: line breaks kept, other controls removed."""
    if not text:
        return ""
    text = clean(text)
    return "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf"))


def identifier(name: str, *, builtins: bool = True) -> str:
    """``name`` as a Starlark/Python identifier that is no keyword and (for globals and
    attributes, not for keyword arguments) hides no builtin."""
    out = re.sub(r"\W", "_", name, flags=re.ASCII) or "_"
    if out[0].isdigit():
        out = "_" + out
    if out in STARLARK_KEYWORDS or keyword.iskeyword(out) or builtins and out in BUILTINS:
        out += "_"
    return out


def _unique(names: Iterable[str], *, builtins: bool = True) -> dict[str, str]:
    """An identifier per name; names that collide after cleaning all get a suffix from a
    hash of the original, so the result does not depend on order."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[identifier(name, builtins=builtins)].append(name)
    out: dict[str, str] = {}
    for base, members in groups.items():
        for name in members:
            out[name] = base if len(members) == 1 else \
                f"{base}_{hashlib.sha1(name.encode()).hexdigest()[:6]}"
    return out


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    """As the tool knows it (the JSON key)."""
    ident: str
    """As a script writes it."""
    annotation: str
    required: bool
    default: str | None
    description: str
    shape: str | None
    """A nested object's fields, TypedDict-style, for a comment."""


@dataclass(frozen=True, slots=True)
class BoundTool:
    """One tool as scripts reach it: ``<server ident>.<ident>(...)``."""

    server: str
    tool: str
    server_ident: str
    ident: str
    spec: ToolLike
    params: tuple[Param, ...]

    @property
    def call_name(self) -> str:
        return f"{self.server_ident}.{self.ident}"

    def kwarg_map(self) -> dict[str, str]:
        """Script keyword → JSON key (both spellings accepted)."""
        out = {p.name: p.name for p in self.params}
        out.update({p.ident: p.name for p in self.params})
        return out


@dataclass
class StubTree:
    """The virtual ``servers/`` tree of one catalog, and how scripts bind to it."""

    level: Level
    tools: dict[tuple[str, str], BoundTool] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, specs: Iterable[ToolLike], level: Level = "server") -> StubTree:
        by_server: dict[str, list[ToolLike]] = defaultdict(list)
        for spec in specs:
            by_server[spec.server].append(spec)
        server_ids = _unique(by_server)
        tree = cls(level)
        for server in sorted(by_server, key=lambda s: server_ids[s]):
            tool_ids = _unique(s.tool for s in by_server[server])
            bound = [BoundTool(server, s.tool, server_ids[server], tool_ids[s.tool], s,
                               _params(s.parameters))
                     for s in sorted(by_server[server], key=lambda s: tool_ids[s.tool])]
            for b in bound:
                tree.tools[(server, b.tool)] = b
            sid = server_ids[server]
            if level == "server":
                tree.files[f"{ROOT}/{sid}.pyi"] = _server_file(server, sid, bound)
            else:
                for b in bound:
                    tree.files[f"{ROOT}/{sid}/{b.ident}.pyi"] = _server_file(server, sid, [b])
        return tree

    def bindings(self) -> dict[str, dict[str, str]]:
        """``{server ident: {tool ident: key}}`` where key is ``"server\\0tool"``."""
        out: dict[str, dict[str, str]] = defaultdict(dict)
        for b in self.tools.values():
            out[b.server_ident][b.ident] = key(b.server, b.tool)
        return dict(out)

    def by_key(self) -> dict[str, BoundTool]:
        return {key(b.server, b.tool): b for b in self.tools.values()}

    def find(self, server: str, tool: str) -> BoundTool | None:
        """A tool by its server's and its own name, as the server or as a script spells them."""
        for b in self.tools.values():
            if server in (b.server, b.server_ident) and tool in (b.tool, b.ident):
                return b
        return None

    def read(self, name: str) -> str | None:
        """A file by path, forgiving a missing ``servers/`` prefix or ``.pyi`` suffix."""
        name = name.strip().lstrip("./").lstrip("/")
        for candidate in (name, f"{ROOT}/{name}", f"{name}.pyi", f"{ROOT}/{name}.pyi"):
            if candidate in self.files:
                return self.files[candidate]
        return None

    def docs(self, server: str, tool: str) -> str | None:
        b = self.find(server, tool)
        if b is None:
            return None
        lines = [f"{b.call_name}  (tool '{one_line(b.tool)}' of MCP server '{one_line(b.server)}')",
                 "", safe_text(b.spec.description).strip() or "(no description)", "",
                 _signature(b), "", "Parameters (JSON Schema):",
                 json.dumps(_clean_json(b.spec.parameters), indent=1, ensure_ascii=False)]
        output = getattr(b.spec, "output_schema", None)
        if output:
            lines += ["", "Returns (JSON Schema of the structured result, a dict in scripts):",
                      json.dumps(_clean_json(output), indent=1, ensure_ascii=False)]
        else:
            lines += ["", "Returns: the tool's text as a str (a dict or list when the server "
                          "sends structured content)."]
        return "\n".join(lines)

    def listing(self) -> str:
        return "\n".join(sorted(self.files))


def key(server: str, tool: str) -> str:
    return f"{server}\0{tool}"


def _clean_json(value: Any) -> Any:
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, list):
        return [_clean_json(v) for v in value]
    if isinstance(value, dict):
        return {safe_text(str(k)): _clean_json(v) for k, v in value.items()}
    return value


# -- schema → types ---------------------------------------------------------------

def _literal(value: Any) -> str:
    """A Python literal for a JSON value; long ones become ``...``."""
    if isinstance(value, str):
        value = one_line(value, MAX_LITERAL)
    try:
        text = repr(value) if not isinstance(value, (dict, list)) else \
            repr(json.loads(json.dumps(value)))
    except (TypeError, ValueError):
        return "..."
    return text if len(text) <= MAX_LITERAL and "\n" not in text else "..."


class _Types:
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
            return f"Literal[{_literal(schema['const'])}]"
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            values = [_literal(v) for v in schema["enum"][:20]]
            if "..." in values:
                return "Any"
            more = ", ..." if len(schema["enum"]) > 20 else ""
            return f"Literal[{', '.join(values)}{more}]"
        for combo in ("anyOf", "oneOf"):
            if isinstance(schema.get(combo), list):
                return _union(self.annotation(s, depth + 1, seen) for s in schema[combo])
        if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            return self.annotation(schema["allOf"][0], depth, seen)
        kind = schema.get("type")
        if isinstance(kind, list):
            out = _union(self.annotation({**schema, "type": k}, depth, seen) for k in kind)
        else:
            out = self._one(kind, schema, depth, seen)
        return _union([out, "None"]) if schema.get("nullable") is True else out

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


def _union(parts: Iterable[str]) -> str:
    seen: list[str] = []
    for part in parts:
        for piece in part.split(" | "):
            if piece not in seen:
                seen.append(piece)
    if "Any" in seen:
        return "Any"
    return " | ".join(seen) or "Any"


def _params(schema: Mapping[str, Any]) -> tuple[Param, ...]:
    types = _Types(dict(schema))
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required_list = [r for r in schema.get("required") or [] if isinstance(r, str)]
    order = [n for n in props if n in required_list] + \
        [n for n in required_list if n not in props] + [n for n in props if n not in required_list]
    idents = _unique(order, builtins=False)
    out = []
    for name in order:
        sub = props.get(name, {})
        resolved, _ = types.resolve(sub)
        required = name in required_list
        annotation = types.annotation(sub)
        default = None
        if not required:
            if isinstance(resolved, dict) and "default" in resolved:
                default = _literal(resolved["default"])
            else:
                default = "None"
                if annotation != "Any" and "None" not in annotation.split(" | "):
                    annotation += " | None"
        description = one_line(resolved.get("description") if isinstance(resolved, dict)
                               else None, 200)
        out.append(Param(name, idents[name], annotation, required, default, description,
                         types.shape(sub)))
    return tuple(out)


def _placeholder(param: Param) -> str:
    first = param.annotation.split(" | ")[0]
    if first.startswith("Literal["):
        return first[len("Literal["):].split(",")[0].rstrip("]")
    return {"str": '"..."', "int": "0", "float": "0.0", "bool": "True"}.get(
        first, "[...]" if first.startswith("list") else "{...}" if first.startswith("dict")
        else "...")


def _output(b: BoundTool) -> tuple[str, str | None]:
    """The return annotation, and the shape of a structured result for a comment."""
    schema = getattr(b.spec, "output_schema", None)
    if not isinstance(schema, dict) or not schema:
        return "Any", None
    types = _Types(schema)
    props = schema.get("properties")
    if isinstance(props, dict) and list(props) == ["result"]:  # a wrapped primitive
        return types.annotation(props["result"]), None
    return types.annotation(schema), types.shape(schema)


def _signature(b: BoundTool) -> str:
    returns = _output(b)[0]
    params = ", ".join(f"{p.ident}: {p.annotation}" + (f" = {p.default}" if not p.required else "")
                       for p in b.params)
    line = f"def {b.ident}({'*, ' if params else ''}{params}) -> {returns}: ..."
    if len(line) <= 100:
        return line
    rows = "".join(f"    {p.ident}: {p.annotation}" + (f" = {p.default}" if not p.required else "")
                   + ",\n" for p in b.params)
    return f"def {b.ident}(\n    *,\n{rows}) -> {returns}: ..."


def _usage(b: BoundTool) -> str:
    args = ", ".join(f"{p.ident}={_placeholder(p)}" for p in b.params if p.required)
    return f"# Usage: {b.call_name}({args})"


def _server_file(server: str, sid: str, bound: list[BoundTool]) -> str:
    count = f"{len(bound)} tool{'s' if len(bound) != 1 else ''}"
    lines = [f"# MCP server '{one_line(server, 80)}': {count}. Call as {sid}.<tool>(name=value) "
             "with keyword arguments, from executeToolCode.",
             "# Returns: a dict or list when the tool sends structured content, else its text "
             "as a str. A failed call stops the script with an error naming it.",
             f'# Full descriptions and schemas: getToolDocs("{sid}", "<tool>").',
             "from typing import Any, Literal", ""]
    for b in bound:
        lines.append(_usage(b))
        summary = one_line(b.spec.description)
        if summary:
            lines.append(f"# {summary}")
        if b.ident != b.tool:
            lines.append(f"# (MCP name: {one_line(b.tool, 80)})")
        for p in b.params:
            notes = [p.description] if p.description else []
            if p.shape:
                notes.append(f"fields {p.shape}")
            if p.ident != p.name:
                notes.append(f"JSON key {one_line(p.name, 40)!r}")
            if notes:
                lines.append("#   " + one_line(f"{p.ident}: {'; '.join(notes)}", 240))
        shape = _output(b)[1]
        if shape:
            lines.append("#   " + one_line(f"returns {shape}", 240))
        lines += [_signature(b), ""]
    return "\n".join(lines)


_REFERENCE = re.compile(r"\b([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)\s*\(")
_ATTRIBUTE = re.compile(r"\b([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)")
_BOUND = re.compile(r"^\s*([A-Za-z_]\w*)\s*[-+*/]?=[^=]|\bfor\s+([A-Za-z_]\w*)", re.M)
_STRINGS = re.compile(r"#[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'")


def referenced(code: str, servers: Iterable[str] | None = None) -> list[str]:
    """The ``server.tool`` calls a script appears to make, in order of first use: a
    preview for the person approving, not a check (aliasing and ``getattr`` escape it;
    every call is asked about when it is made)."""
    known = set(servers) if servers is not None else None
    pattern = _REFERENCE if known is None else _ATTRIBUTE  # with known servers, f = s.t too
    text = _STRINGS.sub('""', code)
    # Variables of the script: counts.values() is no tool.
    local = {a or b for a, b in _BOUND.findall(text)}
    seen: list[str] = []
    for owner, attr in pattern.findall(text):
        if owner in ("json", "struct") or owner in local and known is None \
                or known is not None and owner not in known:
            continue
        name = f"{owner}.{attr}"
        if name not in seen:
            seen.append(name)
    return seen
