"""Resources for the model: each server that has resources gets two tools of tui-agent's
making, ``list_resources`` (its resources and resource templates) and ``read_resource``
(one URI: a listed resource, a filled template, or a ``resource_link`` a tool gave back);
and the reading and filling of a template's variables (the server's suggestions for them
are :mod:`~tui_agent.tools.completion`'s). The two tools are offered and gated like the
server's own tools (``auto = ["read_resource"]`` trusts them), carry a read-only hint, and
are left out where the server has a tool of the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tui_agent.tools.results import as_media
from tui_agent.tools.spec import Media, ToolOutcome
from tui_agent.tools.text import clean

LIST, READ = "list_resources", "read_resource"
MAX_LISTED = 200


@dataclass(frozen=True)
class _ReadOnly:
    read_only_hint: bool = True
    open_world_hint: bool = False


@dataclass(frozen=True)
class ResourceTool:
    """A tool of tui-agent's making, shaped like an MCP ``Tool`` for the catalog."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    title: str | None = None
    annotations: Any = field(default_factory=_ReadOnly)
    output_schema: Any = None
    execution: Any = None


TOOLS = (
    ResourceTool(LIST, "List this server's resources (URI, name, type) and resource "
                       "templates (URI patterns to fill in). Read one with read_resource.",
                 {"type": "object", "properties": {}}),
    ResourceTool(READ, "Read one of this server's resources by URI: a listed resource, a "
                       "template filled in, or a resource link a tool returned.",
                 {"type": "object", "required": ["uri"], "properties": {
                     "uri": {"type": "string", "description": "The resource's URI."}}}),
)


def resource_tools(has_resources: bool, own: list[Any]) -> list[ResourceTool]:
    """The resource tools of a server (none if it has no resources), minus any name the
    server uses for a tool of its own."""
    names = {getattr(t, "name", None) for t in own}
    return [t for t in TOOLS if t.name not in names] if has_resources else []


async def run_resource_tool(conn: Any, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
    """Run ``list_resources`` or ``read_resource`` on ``conn`` (a connection)."""
    if tool == LIST:
        return ToolOutcome(await _listing(conn))
    uri = arguments.get("uri")
    if not isinstance(uri, str) or not uri.strip():
        return ToolOutcome("error: read_resource needs uri, a string", is_error=True)
    result = await conn.request(lambda client: client.read_resource(uri.strip()))
    text, media = contents_text(result.contents)
    return ToolOutcome(text or "(the resource is empty)", False, None, media)


def contents_text(contents: list[Any]) -> tuple[str, tuple[Media, ...]]:
    """The text of a resource's contents (binary parts named), and its images."""
    parts: list[str] = []
    media: list[Media] = []
    for item in contents:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(text)
            continue
        mime = getattr(item, "mime_type", None) or "binary"
        blob = getattr(item, "blob", "") or ""
        parts.append(f"[{mime} data, {len(blob) * 3 // 4} bytes]")
        found = as_media("image", mime, blob) if mime.startswith("image/") else None
        if found is not None:
            media.append(found)
    return clean("\n".join(parts)), tuple(media)


async def _listing(conn: Any) -> str:
    lines: list[str] = []
    for method, field_name, title in (("list_resources", "resources", "resources"),
                                      ("list_resource_templates", "resource_templates",
                                       "resource templates")):
        found: list[Any] = []
        cursor: str | None = None
        for _ in range(20):
            page = await conn.request(
                lambda client, m=method, c=cursor: getattr(client, m)(cursor=c))
            found.extend(getattr(page, field_name))
            cursor = page.next_cursor
            if not cursor or len(found) >= MAX_LISTED:
                break
        lines.append(f"{title} ({len(found)}):" if found else f"{title}: none")
        for item in found[:MAX_LISTED]:
            uri = getattr(item, "uri", None) or getattr(item, "uri_template", "")
            mime = getattr(item, "mime_type", None)
            about = (getattr(item, "description", None) or "").strip().splitlines()
            lines.append(f"- {uri}  {getattr(item, 'name', '')}"
                         f"{f' ({mime})' if mime else ''}{f': {about[0][:120]}' if about else ''}")
        if len(found) > MAX_LISTED:
            lines.append(f"… and more (the first {MAX_LISTED} are listed)")
    return clean("\n".join(lines))


def template_variables(template: str) -> list[str]:
    """The variables of an RFC 6570 template, in order (``{a}``, ``{+b}``, ``{?c,d}``)."""
    found: list[str] = []
    for group in re.findall(r"\{([^}]*)\}", template):
        for name in group.lstrip("+#./;?&").split(","):
            name = name.split(":")[0].rstrip("*")
            if name and name not in found:
                found.append(name)
    return found


def fill_template(template: str, values: dict[str, str]) -> str:
    """``template`` with each simple ``{name}`` replaced (percent-encoded) by its value."""
    from urllib.parse import quote

    return re.sub(r"\{([^}+#./;?&][^}]*)\}",
                  lambda m: quote(values.get(m.group(1), ""), safe=""), template)
