"""A stand-in for the built-in file tools until they exist: an MCP server (the SDK's
MCPServer, over stdio) whose ``write {path, content}`` and ``edit {path, old_string,
new_string}`` do what the real ones will, calling the checkpoint seam
(:func:`tui_agent.builtin.checkpoints.before_write`) before each write. A relative path
is relative to the server's working directory, whose store it keeps in.

    python -m tests.fakes.keeping_server
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

from tui_agent.builtin.checkpoints import before_write

server = MCPServer("keeping")


@server.tool()
def write(path: str, content: str) -> str:
    """Write content to a file (kept first)."""
    note = before_write(path)
    Path(path).write_text(content, encoding="utf-8")
    return f"wrote {path}" + (f" ({note})" if note else "")


@server.tool()
def edit(path: str, old_string: str, new_string: str) -> str:
    """Replace old_string with new_string in a file (kept first)."""
    text = Path(path).read_text(encoding="utf-8")
    if text.count(old_string) != 1:
        raise ValueError(f"old_string is not in {path} exactly once")
    note = before_write(path)
    Path(path).write_text(text.replace(old_string, new_string), encoding="utf-8")
    return f"edited {path}" + (f" ({note})" if note else "")


if __name__ == "__main__":
    server.run()
