"""The built-in server's file tools, one module per tool: ``read``, ``list``, ``glob``,
``grep`` (read-only), ``edit`` and ``write``. Each takes the :class:`Workspace` that
resolves its paths inside the roots; :func:`register` puts them all on a server."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from tui_agent.builtin.files import edit, globbing, grep, listing, read, write
from tui_agent.builtin.workspace import Workspace


def register(server: MCPServer, workspace: Workspace) -> None:
    """Every file tool on ``server``."""
    for module in (read, listing, globbing, grep, edit, write):
        module.register(server, workspace)
