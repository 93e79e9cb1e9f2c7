"""What a 2026-07-28 server's result may leave out, and what it may not: a result without
``resultType`` is complete (SEP-2322), though the SDK's check wants the field
(:mod:`tui_agent.tools.transports.complete` fills it in); a result that breaks the schema
is a tool error that says where, never a traceback. Against tests/fakes/bare_server.py,
written without the SDK so that it can answer both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, tagged_env
from tests.test_hub import call
from tests.zygote import module
from tui_agent.config.models import ServerConfig
from tui_agent.tools.hub import Hub

pytestmark = pytest.mark.anyio


def bare_server() -> ServerConfig:
    command, *argv = module("tests.fakes.bare_server")
    return ServerConfig(command=command, args=argv, cwd=str(ROOT), env=tagged_env(),
                        protocol="2026-07-28")


async def test_a_result_without_a_result_type_is_complete(tmp_path: Path) -> None:
    async with Hub({"bare": bare_server()}, log_dir=tmp_path / "logs",
                   default_timeout=10) as hub:
        await hub.wait_all()
        assert await call(hub, "bare__plain") == ("plain answer", False)


async def test_a_result_that_breaks_the_schema_is_told_as_such(tmp_path: Path) -> None:
    async with Hub({"bare": bare_server()}, log_dir=tmp_path / "logs",
                   default_timeout=10) as hub:
        await hub.wait_all()
        text, is_error = await call(hub, "bare__broken")
        assert is_error, text
        assert "server 'bare' answered the call of broken with a result that breaks the " \
            "MCP schema: " in text and "content" in text, text
        assert "not a list" not in text  # the server's own values stay out
        assert await call(hub, "bare__plain") == ("plain answer", False)  # still usable
