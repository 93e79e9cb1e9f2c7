"""A server's starts as its login shapes them (tui_agent/tools/login_wait.py), in the hub,
against the OAuth fake (tests/fakes/oauth_server.py): a start that fails at its login waits
for a person and is not tried again by itself, even for a lazy server; and whoever waits
for a start to end (``l`` on the servers screen) is told when the server is stopped or
disabled first, instead of waiting until the app exits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.test_login import guarded
from tui_agent.config.models import ServerConfig
from tui_agent.tools.auth.logins import Logins
from tui_agent.tools.auth.storage import FileVault, TokenStore
from tui_agent.tools.hub import Hub
from tui_agent.tools.login_wait import STOPPED

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
NEEDS = "needs login: run 'tui-agent login guarded'"


@asynccontextmanager
async def hub_of(url: str, tmp_path: Path, logins: Logins, **config: object
                 ) -> AsyncIterator[Hub]:
    servers = {"guarded": ServerConfig.model_validate({"url": url, **config})}
    hub = Hub(servers, log_dir=tmp_path / "logs", default_timeout=20,
              client_side=logins.client_side)
    hub.start()
    try:
        yield hub
    finally:
        await hub.close()


def logins_of(tmp_path: Path, shown: list[str] | None = None) -> Logins:
    """The logins of a run with nobody at a browser (``shown``: a page is shown to nobody,
    only listed there)."""
    store = TokenStore(FileVault(tmp_path / "tokens.json"))
    return Logins(store, None if shown is None else lambda _name, url: shown.append(url))


async def test_a_lazy_server_whose_login_fails_waits_for_a_person(tmp_path: Path) -> None:
    """Without the fix the demand that started the lazy server also ended the wait for a
    person, and the login failed a second time by itself (after ``backoff``: none here)."""
    with guarded() as url:
        async with hub_of(url, tmp_path, logins_of(tmp_path), lazy=True, backoff=0) as hub:
            conn = hub.connections["guarded"]
            first = conn.next_start()
            conn.demand()
            assert await asyncio.wait_for(first, 30) == NEEDS
            again = conn.next_start()
            # Nothing happens until a person acts: no second start within a time far longer
            # than a start takes here (a loaded machine can only make this pass, never fail).
            done, _ = await asyncio.wait({again}, timeout=3)
            assert not done, "the login was tried again by itself"
            assert conn.state == "failed" and conn.breaker.state == "closed"
            conn.reconnect()  # r: the start goes again, and ends as the first did
            assert await asyncio.wait_for(again, 30) == NEEDS


@pytest.mark.parametrize("how", ["disable", "close"])
async def test_a_start_waited_for_ends_when_the_server_is_stopped(
        tmp_path: Path, how: str) -> None:
    """``l`` waits for the start it asked for; the server is disabled (or the hub closed)
    while a person is still logging in: the wait ends, saying so."""
    shown: list[str] = []
    logins = logins_of(tmp_path, shown)
    logins.allow("guarded")
    with guarded() as url:
        async with hub_of(url, tmp_path, logins) as hub:
            conn = hub.connections["guarded"]
            waiter = conn.next_start()
            for _ in range(600):  # the login page is up, and nobody reads it
                if shown and conn.side.person_busy():
                    break
                await asyncio.sleep(0.05)
            assert shown and conn.side.person_busy()
            await (hub.disable("guarded") if how == "disable" else hub.close())
            assert await asyncio.wait_for(waiter, 10) == STOPPED
            assert await asyncio.wait_for(conn.next_start(), 1) == STOPPED
