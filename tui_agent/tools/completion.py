"""What a server suggests for a value being typed (``completion/complete``): a variable of
a resource template, or an argument of a prompt. The app's forms for both ask here, as
the person types, with the values filled in so far (a server may narrow one argument's
suggestions by another's value). A server that does not declare ``completions`` is not
asked, and one that fails to answer suggests nothing: completion only ever helps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tui_agent.tools.text import clean

MAX_SUGGESTED = 100
"""The spec's own limit on the values of one answer."""


@dataclass(frozen=True)
class Completing:
    """What is being filled in: a prompt (``kind`` ``prompt``, ``name`` its name) or a
    resource template (``kind`` ``resource``, ``name`` its URI template)."""

    kind: Literal["prompt", "resource"]
    name: str


async def complete(conn: Any, target: Completing, argument: str, value: str,
                   context: dict[str, str] | None = None) -> list[str]:
    """The server's suggestions for ``argument`` of ``target``, given what is typed
    (``value``) and the arguments filled already; none when the server offers no
    completion or fails to."""
    from mcp import MCPError
    from mcp.types import PromptReference, ResourceTemplateReference

    ref = PromptReference(type="ref/prompt", name=target.name) if target.kind == "prompt" \
        else ResourceTemplateReference(type="ref/resource", uri=target.name)

    async def ask(client: Any) -> Any:
        if getattr(client.server_capabilities, "completions", None) is None:
            return None  # it would only answer "method not found", at every key
        return await client.complete(ref, {"name": argument, "value": value},
                                     {k: v for k, v in (context or {}).items() if v} or None)

    try:
        result = await conn.request(ask)
    except MCPError:
        return []
    if result is None:
        return []
    return [clean(str(v)) for v in result.completion.values][:MAX_SUGGESTED]
