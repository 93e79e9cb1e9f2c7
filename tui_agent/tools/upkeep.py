"""What runs beside one connected MCP session, while it serves: a heartbeat that pings an
idle connection and restarts a stale one, the tool list refreshed on ``list_changed``
(debounced; 2026 servers announce it through a subscription) or when older than
``tools_ttl``, and the stop of a server no call has used for ``idle_timeout``.

:class:`Upkeep` is the base of :class:`~tui_agent.tools.lifecycle.ServerLifecycle`, which
owns the session and the state these tasks report into.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, Literal

from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import list_tools, ping
from tui_agent.tools.errors import describe_error

State = Literal["connecting", "connected", "degraded", "failed", "disabled", "idle"]
"""``idle``: a lazy server not started yet, or stopped after ``idle_timeout``; its tools
stay listed and a call starts it."""
DEBOUNCE = 0.3
"""Seconds to gather a burst of ``list_changed`` notifications into one refresh."""


class Upkeep:
    """The upkeep tasks of a served session (see the module). The attributes and the
    three methods below are the owning :class:`~tui_agent.tools.lifecycle.ServerLifecycle`'s."""

    config: ServerConfig
    state: State
    tools: list[Any]
    tools_at: float
    protocol: str | None
    _client: Any
    _on_change: Callable[[Any], None] | None
    _refresh_wanted: asyncio.Event
    _last_answer: float
    _last_use: float
    _in_flight: int

    def _set(self, state: State, error: str | None = None) -> None:
        raise NotImplementedError

    def _broken(self, reason: str) -> None:
        raise NotImplementedError

    def _signal(self, reason: str) -> None:
        raise NotImplementedError

    def _note(self, line: str) -> None:
        raise NotImplementedError

    async def _idler(self, after: float) -> None:
        """Stop the server once no call has used it for ``after`` seconds."""
        import anyio

        while True:
            quiet = time.monotonic() - self._last_use
            if quiet >= after and self._in_flight == 0:
                self._note(f"stopping: no call for {after:g} s (idle_timeout)")
                self._signal("idle")
                return
            await anyio.sleep(max(0.05, after - quiet))

    def _answered(self) -> None:
        self._last_answer = time.monotonic()

    async def _heartbeat(self, client: Any) -> None:
        import anyio

        interval = self.config.heartbeat_interval
        while True:
            await anyio.sleep(interval)
            if time.monotonic() - self._last_answer >= interval:
                try:
                    with anyio.fail_after(min(interval, 10.0)):
                        await ping(client, self.protocol)
                    self._answered()  # any answer, even an error, proves it is alive
                    if self.state == "degraded":
                        self._set("connected")
                except Exception as exc:
                    self._set("degraded", f"no answer to a heartbeat: {describe_error(exc)}")
            silent = time.monotonic() - self._last_answer
            if silent > self.config.stale_timeout:
                self._broken(f"no answer for {silent:.0f} s (stale_timeout)")
                return

    async def _listen(self, client: Any) -> None:
        """2026 servers announce tool changes through a subscription."""
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self._refresh_wanted.set()

    async def _refresher(self, client: Any) -> None:
        import anyio

        while True:
            await self._refresh_wanted.wait()
            await anyio.sleep(DEBOUNCE)
            self._refresh_wanted.clear()
            await self._refresh(client)

    async def _refresh(self, client: Any) -> None:
        import anyio

        try:
            with anyio.fail_after(self.config.startup_timeout):
                await self._fetch_tools(client)
        except Exception as exc:
            self._note(f"could not refresh the tools: {describe_error(exc)}")

    async def refresh_if_stale(self) -> None:
        if self._client is not None and time.monotonic() - self.tools_at > self.config.tools_ttl:
            await self._refresh(self._client)

    async def _fetch_tools(self, client: Any) -> None:
        self.tools, self.tools_at = await list_tools(client), time.monotonic()
        self._answered()
        if self._on_change is not None:
            self._on_change(self)
