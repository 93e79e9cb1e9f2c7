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

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tui_agent.codemode.annotations import MAX_ENUM, Types, literal
from tui_agent.codemode.names import clean_json, one_line, safe_text, unique

Level = Literal["server", "tool"]
ROOT = "servers"


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
        server_ids = unique(by_server)
        tree = cls(level)
        for server in sorted(by_server, key=lambda s: server_ids[s]):
            tool_ids = unique(s.tool for s in by_server[server])
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
                 json.dumps(clean_json(b.spec.parameters), indent=1, ensure_ascii=False)]
        output = getattr(b.spec, "output_schema", None)
        if output:
            lines += ["", "Returns (JSON Schema of the structured result, a dict in scripts):",
                      json.dumps(clean_json(output), indent=1, ensure_ascii=False)]
        else:
            lines += ["", "Returns: the tool's text as a str (a dict or list when the server "
                          "sends structured content)."]
        return "\n".join(lines)

    def listing(self) -> str:
        return "\n".join(sorted(self.files))


def key(server: str, tool: str) -> str:
    return f"{server}\0{tool}"


def _params(schema: Mapping[str, Any]) -> tuple[Param, ...]:
    types = Types(dict(schema))
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required_list = [r for r in schema.get("required") or [] if isinstance(r, str)]
    order = [n for n in props if n in required_list] + \
        [n for n in required_list if n not in props] + [n for n in props if n not in required_list]
    idents = unique(order, builtins=False)
    out = []
    for name in order:
        sub = props.get(name, {})
        resolved, _ = types.resolve(sub)
        required = name in required_list
        annotation = types.annotation(sub)
        default = None
        if not required:
            default = "None"
            if isinstance(resolved, dict) and "default" in resolved:
                default = literal(resolved["default"])
            if default == "None" and annotation != "Any" and \
                    "None" not in annotation.split(" | "):
                annotation += " | None"
        description = _described(resolved)
        out.append(Param(name, idents[name], annotation, required, default, description,
                         types.shape(sub)))
    return tuple(out)


def _described(schema: Any) -> str:
    """A parameter's description, with what its annotation cannot say: the ``format`` of
    a string, the values of an enum too long to be a ``Literal``."""
    if not isinstance(schema, dict):
        return ""
    notes = [str(schema.get("description") or "")]
    if isinstance(schema.get("format"), str):
        notes.append(f"format: {schema['format']}")
    values = schema.get("enum")
    if isinstance(values, list) and len(values) > MAX_ENUM:
        listed = ", ".join(literal(v) for v in values[:MAX_ENUM])
        notes.append(f"one of {len(values)} values: {listed}, ... (getToolDocs lists all)")
    return one_line("; ".join(n for n in notes if n), 240)


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
    types = Types(schema)
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
