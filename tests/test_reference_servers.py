"""The hub against MCP servers nobody here wrote, over every transport they offer:
mcp-server-time and mcp-server-git (PyPI) over stdio, and server-everything (npm)
over stdio, SSE and streamable HTTP."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, tagged_env
from tests.reference import START, everything, free_port, http_server, python_server
from tests.test_hub import call, hub_of
from tests.zygote import module
from tui_agent.config.models import ServerConfig

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_mcp_server_time(tmp_path: Path) -> None:
    server = ServerConfig(command=python_server("mcp-server-time"),
                          args=["--local-timezone", "UTC"], env=tagged_env(), startup_timeout=START)
    async with hub_of({"time": server}, tmp_path) as hub:
        assert {s.name for s in hub.specs()} == {"time__get_current_time",
                                                 "time__convert_time"}
        text, is_error = await call(hub, "time__convert_time", source_timezone="UTC",
                                    time="12:00", target_timezone="Asia/Tokyo")
        assert not is_error
        assert "timezone: Asia/Tokyo" in text and "T21:00:00" in text
        text, is_error = await call(hub, "time__get_current_time", timezone="Not/AZone")
        assert is_error and "Not/AZone" in text


async def test_mcp_server_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "first commit"], check=True)
    (repo / "b.txt").write_text("untracked\n")
    server = ServerConfig(command=python_server("mcp-server-git"),
                          args=["--repository", str(repo)], env=tagged_env(), startup_timeout=START)
    async with hub_of({"git": server}, tmp_path) as hub:
        names = {s.name for s in hub.specs()}
        assert {"git__git_status", "git__git_log", "git__git_commit"} <= names
        text, is_error = await call(hub, "git__git_status", repo_path=str(repo))
        assert not is_error and "b.txt" in text
        text, is_error = await call(hub, "git__git_log", repo_path=str(repo))
        assert not is_error and "first commit" in text


async def check_everything(name: str, server: ServerConfig, tmp_path: Path) -> None:
    async with hub_of({name: server}, tmp_path) as hub:
        status = hub.statuses()[0]
        assert status.state == "connected", status.last_error
        names = {s.name for s in hub.specs()}
        assert {f"{name}__echo", f"{name}__get-sum", f"{name}__get-tiny-image"} <= names
        text, is_error = await call(hub, f"{name}__echo", message="over the wire")
        assert (is_error, "over the wire" in text) == (False, True)
        assert await call(hub, f"{name}__get-sum", a=2, b=40) == ("The sum of 2 and 40 is 42.",
                                                                  False)
        text, _ = await call(hub, f"{name}__get-tiny-image")
        assert "[image: image/png," in text and "iVBOR" not in text
        text, _ = await call(hub, f"{name}__get-structured-content", location="Chicago")
        assert "temperature:" in text and "conditions:" in text
        resources = await hub.resources()
        assert resources[0].error is None and resources[0].items
        prompts = await hub.prompts()
        assert prompts[0].items


async def test_server_everything_over_stdio(tmp_path: Path) -> None:
    server = ServerConfig(command=everything(), args=["stdio"], env=tagged_env(),
                          startup_timeout=START)
    await check_everything("every", server, tmp_path)


async def test_server_everything_over_sse(tmp_path: Path) -> None:
    port = free_port()
    with http_server([everything(), "sse"], port, {"PORT": str(port)}, "/sse") as url:
        await check_everything("every", ServerConfig(url=url), tmp_path)


async def test_server_everything_over_streamable_http(tmp_path: Path) -> None:
    port = free_port()
    with http_server([everything(), "streamableHttp"], port, {"PORT": str(port)},
                     "/mcp") as url:
        await check_everything("every", ServerConfig(url=url, transport="http"), tmp_path)


@pytest.mark.parametrize("transport", ["sse", "http"])
async def test_our_server_over_http_transports(transport: str, tmp_path: Path) -> None:
    port = free_port()
    path = "/sse" if transport == "sse" else "/mcp"
    command = module("tests.fakes.mcp_server", "--transport", transport, "--port", str(port))
    with http_server(command, port, {"PYTHONPATH": str(ROOT)}, path) as url:
        server = ServerConfig(url=url, transport=transport,  # type: ignore[arg-type]
                              headers={"Authorization": "Bearer t"}, timeout=5)
        async with hub_of({"web": server}, tmp_path) as hub:
            assert await call(hub, "web__add", a=1, b=2) == ("3", False)
            text, is_error = await call(hub, "web__hang")
            assert is_error and "did not answer within 5 s" in text
            assert await call(hub, "web__echo", text="still fine") == ("still fine", False)
