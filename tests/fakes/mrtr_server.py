"""An MCP server (the SDK's) whose every question to the client is embedded in a result:
each tool asks through a resolver, which in the 2026-07-28 protocol answers the call with
``input_required`` (SEP-2322, multi-round-trip requests) and is called again with the
client's answers. One tool each for a form (elicitation), the client's model (sampling)
and the client's roots, so a test can check that embedded requests reach the same person-
facing paths as requests made on the open session (the modal in the app, the flags
headless). Run with ``protocol = "2026-07-28"`` in the client's config: there is no other
way for a request to reach the client then.

    python -m tests.fakes.mrtr_server
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import ElicitationResult, ListRoots, MCPServer, Resolve
from mcp_types import CreateMessageResult, ListRootsResult

from tests.fakes.asking_server import Booking, booking, haiku_request


def roots_request() -> ListRoots:
    return ListRoots()


def build() -> MCPServer:
    server = MCPServer("mrtr")

    @server.tool(description="Asks the person for a table booking and says what came back.")
    async def book(got: Annotated[ElicitationResult[Booking], Resolve(booking)]) -> str:
        return f"{got.action}: {got.data.model_dump_json() if got.action == 'accept' else ''}"

    @server.tool(description="Asks the client's model for a haiku.")
    async def haiku(got: Annotated[CreateMessageResult, Resolve(haiku_request)]) -> str:
        return f"{got.model} wrote: {getattr(got.content, 'text', '')}"

    @server.tool(description="The roots the client gives when asked.")
    async def roots(got: Annotated[ListRootsResult, Resolve(roots_request)]) -> str:
        return ", ".join(str(root.uri) for root in got.roots) or "(none)"

    return server


if __name__ == "__main__":
    build().run()
