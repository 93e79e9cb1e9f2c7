"""The client's MCP roots, as the built-in server learns them: asked with ``roots/list``
before the first tool call that needs them, asked again after the client says they changed
(``notifications/roots/list_changed``, e.g. after ``/add-dir``). A client that offers no
roots leaves the ``--root`` folders (or the working directory) alone."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from mcp import types
from mcp.server.mcpserver import Context, MCPServer

from tui_agent.builtin.workspace import Workspace

ASK_TIMEOUT = 10.0
"""Seconds a client may take to list its roots before the call goes on without them."""


async def current(ctx: Context[Any, Any], workspace: Workspace) -> list[Path]:
    """The roots, after asking the client if it offers roots and was not asked since they
    last changed."""
    if workspace.client_roots is None:
        workspace.client_roots = await _ask(ctx)
    return workspace.roots()


async def _ask(ctx: Context[Any, Any]) -> list[Path]:
    import anyio

    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return []
    with warnings.catch_warnings():  # roots are deprecated in the 2026 protocol era only
        warnings.simplefilter("ignore")
        with anyio.move_on_after(ASK_TIMEOUT):
            listed = await ctx.session.list_roots()
            return [path for root in listed.roots if (path := _path(str(root.uri)))]
    return []


def _path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def listen(server: MCPServer, workspace: Workspace) -> None:
    """Forget the client's roots when it says they changed (asked again at the next call).
    The SDK's :class:`MCPServer` has no public seam for a client notification, so the
    handler goes on its low-level server."""
    async def changed(ctx: Any, params: Any) -> None:
        workspace.client_roots = None

    server._lowlevel_server.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, changed)
