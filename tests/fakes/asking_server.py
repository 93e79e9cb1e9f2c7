"""An MCP server (the SDK's) whose tools report what the client side gave them: the roots
the client answers ``roots/list`` with, and the ``Authorization`` header a call came with.
The tests of the client seam run it over stdio, or streamable HTTP on a loopback port.

    python -m tests.fakes.asking_server [--transport stdio|http] [--port N]
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import Context, MCPServer


def build() -> MCPServer:
    server = MCPServer("asking")

    @server.tool(description="The roots the client gives when asked (roots/list).")
    async def roots(ctx: Context) -> str:
        listed = await ctx.session.list_roots()
        return ", ".join(str(root.uri) for root in listed.roots) or "(none)"

    @server.tool(description="The Authorization header this call came with (HTTP only).")
    def authorization(ctx: Context) -> str:
        return (ctx.headers or {}).get("authorization", "(none)")

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = build()
    if args.transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
