"""The seam where the client side of MCP plugs in: what :class:`ClientSide` carries (the
handlers of a server's requests, the HTTP auth) reaches the server through the hub and
the lifecycle code unchanged, over real transports, and nothing is offered by default."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.types import ListRootsResult, Root
from pydantic import FileUrl

from tests.conftest import ROOT, fake_server, tagged_env
from tests.reference import free_port, http_server
from tests.test_hub import call
from tests.zygote import module
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide
from tui_agent.tools.hub import ClientSides, Hub

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@asynccontextmanager
async def hub_of(servers: Mapping[str, ServerConfig], tmp_path: Path,
                 client_side: ClientSides) -> AsyncIterator[Hub]:
    async with Hub(servers, log_dir=tmp_path / "logs", default_timeout=20,
                   client_side=client_side) as hub:
        await hub.wait_all()
        yield hub


def asking_server() -> ServerConfig:
    """tests/fakes/asking_server.py over stdio, in the 2025 protocol."""
    command, *argv = module("tests.fakes.asking_server")
    return ServerConfig(command=command, args=argv, cwd=str(ROOT), env=tagged_env(),
                        protocol="legacy")


async def test_a_handler_given_per_server_answers_that_servers_request(tmp_path: Path) -> None:
    """A ``roots/list`` handler supplied for one server answers it; the other server,
    given nothing, is not offered roots (the client declares no such capability). The
    2025 protocol: there a server's request reaches the client on the open session
    (the 2026 one has no back-channel; issue 21 answers it through ``input_required``)."""
    asked: list[str] = []

    async def roots(context: Any) -> ListRootsResult:
        asked.append("roots")
        return ListRootsResult(roots=[Root(uri=FileUrl("file:///work/project"), name="project")])

    def side(name: str, config: ServerConfig) -> ClientSide:
        return ClientSide(list_roots=roots) if name == "given" else ClientSide()

    servers = {name: asking_server() for name in ("given", "plain")}
    async with hub_of(servers, tmp_path, client_side=side) as hub:
        assert await call(hub, "given__roots") == ("file:///work/project", False)
        text, is_error = await call(hub, "plain__roots")
        assert is_error and "List roots not supported" in text, text
    assert asked == ["roots"]


async def test_progress_of_a_call_reaches_the_progress_handler(tmp_path: Path) -> None:
    """Each progress notification of a call is handed on, with the tool's name, while the
    call goes on to its result."""
    told: list[tuple[str, float, float | None, str | None]] = []

    async def progress(tool: str, done: float, total: float | None,
                       message: str | None) -> None:
        told.append((tool, done, total, message))

    servers = {"slow": fake_server()}
    async with hub_of(servers, tmp_path,
                      client_side=lambda name, config: ClientSide(progress=progress)) as hub:
        assert await call(hub, "slow__progress", total=0.75, every=0.25) == \
            ("done after 3 steps", False)
    assert told == [("progress", float(n), 3.0, f"step {n}") for n in (1, 2, 3)]


async def test_the_auth_object_goes_with_every_http_request(tmp_path: Path) -> None:
    """An ``httpx`` auth flow given for a streamable-HTTP server signs its requests
    (OAuth's providers are such flows); the server sees the header it set."""
    seen: list[str] = []

    class Signed(httpx2.Auth):
        def auth_flow(self, request: httpx2.Request) -> Any:
            seen.append(request.method)
            request.headers["Authorization"] = "Bearer from-the-auth-flow"
            yield request

    port = free_port()
    command = module("tests.fakes.asking_server", "--transport", "http", "--port", str(port))
    with http_server(command, port, {"PYTHONPATH": str(ROOT)}, "/mcp") as url:
        servers = {"web": ServerConfig(url=url, transport="http")}
        async with hub_of(servers, tmp_path,
                          client_side=lambda name, config: ClientSide(auth=Signed())) as hub:
            assert await call(hub, "web__authorization") == ("Bearer from-the-auth-flow", False)
    assert "POST" in seen
