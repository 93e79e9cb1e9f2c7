"""What the hub asks of its servers besides tool calls: resources, resource templates and
prompts listed across every live server (one server's failure is its own
:class:`Listing`'s error), one resource read, one prompt given. The base of
:class:`~tui_agent.tools.hub.Hub`, which owns the connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui_agent.tools.connection import ServerConnection
from tui_agent.tools.errors import METHOD_NOT_FOUND, ServerError, describe_error
from tui_agent.tools.paging import pages
from tui_agent.tools.resource_tools import contents_text
from tui_agent.tools.results import describe_block
from tui_agent.tools.text import clean


@dataclass(frozen=True, slots=True)
class Listing:
    """One server's answer to a resources or prompts listing."""

    server: str
    items: list[Any]
    error: str | None = None


class ServerContext:
    """Resources and prompts across the servers in ``connections`` (the hub's)."""

    connections: dict[str, ServerConnection]

    async def _listing(self, method: str, field: str) -> list[Listing]:
        async def one(conn: ServerConnection) -> Listing:
            items: list[Any] = []
            try:
                async for page in pages(conn, method, field):
                    items.extend(page)
            except Exception as exc:
                if getattr(exc, "code", None) == METHOD_NOT_FOUND:
                    return Listing(conn.name, [])
                return Listing(conn.name, items, describe_error(exc))
            return Listing(conn.name, items)

        live = [c for c in self.connections.values() if c.state in ("connected", "degraded")]
        return list(await asyncio.gather(*(one(c) for c in live)))

    async def resources(self) -> list[Listing]:
        return await self._listing("list_resources", "resources")

    async def resource_templates(self) -> list[Listing]:
        return await self._listing("list_resource_templates", "resource_templates")

    async def prompts(self) -> list[Listing]:
        return await self._listing("list_prompts", "prompts")

    async def read_resource(self, server: str, uri: str) -> str:
        """The resource's text (binary parts summarised). Raises :class:`ServerError`."""
        result = await self._ask(server, lambda client: client.read_resource(uri),
                                 f"could not read {uri}")
        return contents_text(result.contents)[0]

    async def get_prompt(self, server: str, name: str,
                         arguments: dict[str, str] | None = None) -> list[tuple[str, str]]:
        """The prompt's messages as ``(role, text)``. Raises :class:`ServerError`."""
        result = await self._ask(server, lambda client: client.get_prompt(name, arguments),
                                 f"could not give prompt {name}")
        messages = []
        for message in result.messages:
            content = message.content
            text = getattr(content, "text", None)
            messages.append((str(message.role), clean(text if isinstance(text, str)
                                                      else describe_block(content) or "")))
        return messages

    async def _ask(self, server: str, what: Callable[[Any], Any], failed: str) -> Any:
        """One request to ``server``; any failure is a :class:`ServerError` naming it."""
        conn = self.connections.get(server)
        if conn is None:
            raise ServerError(f"no server named '{server}'")
        try:
            return await conn.request(what)
        except ServerError:
            raise
        except Exception as exc:
            raise ServerError(f"server '{server}' {failed}: {describe_error(exc)}") from None
