"""MCP roots: the directories a server may work in. By default the project directory
(where tui-agent runs) and ``[agent] roots``; a server's own ``roots`` replaces them (to
narrow what it sees). A server asks with ``roots/list``; when ``[agent] roots`` changes,
every connected server is told (``notifications/roots/list_changed``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.config.models import ServerConfig

if TYPE_CHECKING:
    from mcp.client.session import ListRootsFnT


def roots_of(config: ServerConfig, shared: list[str], project: Path) -> list[Path]:
    """The directories of a server: its own ``roots``, else the project and ``shared``;
    ``~`` expanded, relative ones taken from the project, each once."""
    listed = config.roots if config.roots is not None else [str(project), *shared]
    found: list[Path] = []
    for entry in listed:
        path = Path(os.path.expanduser(entry))
        path = (path if path.is_absolute() else project / path).resolve()
        if path not in found:
            found.append(path)
    return found


def list_roots_handler(roots: Callable[[], list[Path]]) -> ListRootsFnT:
    """The SDK's ``roots/list`` callback, answering with ``roots()`` as it is then."""
    async def handle(context: Any) -> Any:
        from mcp import types  # here, not at the start: the server spawns before the SDK loads
        from pydantic import FileUrl

        return types.ListRootsResult(roots=[
            types.Root(uri=FileUrl(path.as_uri()), name=path.name or str(path))
            for path in roots()])

    return handle
