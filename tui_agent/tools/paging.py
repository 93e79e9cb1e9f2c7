"""Paging through one of a server's lists (``prompts/list``, ``resources/list``,
``resources/templates/list``): each page asked for over the server's connection with the
cursor the last one ended on, up to :data:`MAX_PAGES`. The hub gathers whole lists from
every server with it; :func:`~tui_agent.tools.prompts.find_prompt` stops at the page that
holds the prompt it looks for. The tools list has its own loop (``client.list_tools``),
run inside the connection as it starts.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui_agent.tools.connection import ServerConnection

MAX_PAGES = 100
"""A server whose cursors never end is read this far and no further."""


async def pages(conn: ServerConnection, method: str, field: str
                ) -> AsyncGenerator[list[Any], None]:
    """The items of each page of ``conn``'s list: ``method`` is the SDK client's
    (``list_prompts``), ``field`` the result's (``prompts``). Raises what the request
    raises."""
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await conn.request(_lister(method, cursor))
        yield list(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return


def _lister(method: str, cursor: str | None) -> Callable[[Any], Any]:
    return lambda client: getattr(client, method)(cursor=cursor)
