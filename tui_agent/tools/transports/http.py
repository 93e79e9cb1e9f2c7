"""The ``httpx`` client of an SSE or streamable HTTP server: the SDK's (its timeouts, its
headers, the server's auth), with one addition. A request of a login step
(:data:`~tui_agent.tools.errors.LOGIN_STEP`) that gets no answer keeps the error on itself
(:data:`~tui_agent.tools.errors.UNANSWERED`): ``httpx`` raises it outside the auth flow,
which would otherwise know only that its request went unanswered, not why (a step-up
names it: :mod:`~tui_agent.tools.auth.step_up`).
"""

from __future__ import annotations

import httpx2
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from tui_agent.tools.errors import LOGIN_STEP, UNANSWERED


def http_client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    """What the SDK's ``create_mcp_http_client`` makes, its transport telling on failures
    (see the module); a ``McpHttpClientFactory`` too."""
    return httpx2.AsyncClient(
        headers=headers, auth=auth, transport=_TellsFailures(httpx2.AsyncHTTPTransport()),
        timeout=timeout or httpx2.Timeout(MCP_DEFAULT_TIMEOUT,
                                          read=MCP_DEFAULT_SSE_READ_TIMEOUT))


class _TellsFailures(httpx2.AsyncBaseTransport):
    """``inner``, keeping on a login step's request the error that kept it from an answer."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self.inner.handle_async_request(request)
        except Exception as exc:
            if LOGIN_STEP in request.extensions:
                request.extensions[UNANSWERED] = exc
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()
