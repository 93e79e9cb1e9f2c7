"""Every configured MCP server behind one catalog: the agent's :class:`ToolSource`.

Servers start concurrently in the background; nothing waits for them until a
turn needs tools, and then only for servers still starting, up to their
start-up timeout (:meth:`Hub.prepare` says so). Tools are named
``<server>__<tool>`` (see :mod:`tui_agent.tools.naming`). One server's failure
is that server's state; the others and the chat carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.config.models import ServerConfig
from tui_agent.config.printable import safe_name
from tui_agent.tools.client import NOTHING, ClientSide
from tui_agent.tools.connection import ServerConnection, ServerStatus
from tui_agent.tools.errors import ServerError, describe_error
from tui_agent.tools.metrics import Metrics
from tui_agent.tools.naming import catalog_names
from tui_agent.tools.news import LogLine
from tui_agent.tools.resource_tools import ResourceTool, resource_tools, run_resource_tool
from tui_agent.tools.results import render
from tui_agent.tools.server_context import Listing, ServerContext
from tui_agent.tools.skills.shelf import SkillShelf
from tui_agent.tools.spec import ToolOutcome, ToolSpec, asks_of, fingerprint, hints_of
from tui_agent.tools.text import clean, utf8_size

__all__ = ["Changes", "ClientSides", "Hub", "Listing", "same_server"]

ClientSides = Callable[[str, ServerConfig], ClientSide]
"""The :class:`ClientSide` of a server, by name and config (built by the wiring)."""
CLOSE_TIMEOUT = 8.0
"""The SDK gives a stdio server 2 s after EOF and 2 s after SIGTERM before SIGKILL."""
SPEC_MARGIN = 5.0
NOTE_AFTER = 0.3
"""Seconds a turn waits for the servers still starting before it says it waits for them:
what fails at once (a command not found) or is just ready is not named."""


@dataclass(frozen=True, slots=True)
class Entry:
    spec: ToolSpec
    retry_safe: bool
    local: bool = False
    """One of tui-agent's resource tools (run here, as requests to the server)."""


EARLY_WAIT = 0.5
"""Seconds :meth:`Hub.start_early` waits for the stdio servers' processes to be spawned
(a few loop turns each; the bound is for a loaded machine)."""


class Hub(ServerContext, SkillShelf):
    """All servers; routes calls by model-facing name; their resources and prompts
    (:class:`ServerContext`) and skills (:class:`SkillShelf`)."""

    def __init__(self, servers: Mapping[str, ServerConfig], *, log_dir: Path,
                 default_timeout: float = 60.0, client_side: ClientSides | None = None,
                 secrets: frozenset[str] = frozenset(),
                 unready: Mapping[str, str] | None = None) -> None:
        """``client_side`` gives each server (by name and config) what it may ask of us
        and how to authenticate to it (:class:`~tui_agent.tools.client.ClientSide`); by
        default nothing is offered. ``secrets`` are masked in the servers' log files.
        ``unready`` servers (by name, with why) are shown failed and never started."""
        self.secrets = secrets
        self.unready = dict(unready or {})
        from tui_agent.tools.transports.sdk import route_sdk_logs

        route_sdk_logs(log_dir / "mcp-client.log")
        self._log_dir, self._default_timeout = log_dir, default_timeout
        self._client_side = client_side
        self.log_listeners: list[Callable[[LogLine], None]] = []
        """Told each line any server logs (``notifications/message``)."""
        self.resource_listeners: list[Callable[[str, str], None]] = []
        """Told ``(server, uri)`` when a watched resource changed (``Connection.watch``)."""
        self.connections = {name: self._connection(name, cfg) for name, cfg in servers.items()}
        self._catalog: dict[str, Entry] = {}
        self._listeners: list[Callable[[ServerStatus], None]] = []
        self._reported: set[str] = set()
        self.metrics = Metrics()

    async def __aenter__(self) -> Hub:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def start(self) -> None:
        for conn in self.connections.values():
            conn.restart_clock()  # one started early: see :meth:`start_early`
            conn.start()

    async def start_early(self, within: float = EARLY_WAIT) -> None:
        """Start the stdio servers that are not lazy (a process of the user's machine: no
        login, no container) and return once each has been spawned (the SDK then loads in
        a thread), or has settled, or ``within`` seconds have passed: ``run`` calls this
        before it waits for litellm to load, so those servers load meanwhile;
        :meth:`start` starts the rest later, and gives a start under way its whole
        ``startup_timeout`` again (the set-up held the loop)."""
        early = [c for c in self.connections.values()
                 if c.config.transport == "stdio" and not c.lazy]
        for conn in early:
            conn.start()
        waits = [asyncio.ensure_future(c.wait_spawned()) for c in early if not c.settled]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=within)
            for wait in pending:
                wait.cancel()

    async def close(self) -> None:
        """Close every server at once; what is still running after the grace period
        is abandoned to the SDK's SIGKILL."""
        closing = [asyncio.create_task(c.close()) for c in self.connections.values()]
        if closing:
            done, pending = await asyncio.wait(closing, timeout=CLOSE_TIMEOUT)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=2.0)
            for task in done:
                with contextlib.suppress(Exception):
                    task.result()

    def _connection(self, name: str, config: ServerConfig) -> ServerConnection:
        side = self._client_side(name, config) if self._client_side is not None else NOTHING
        conn = ServerConnection(name, config, log_dir=self._log_dir,
                                default_timeout=self._default_timeout, on_change=self._changed,
                                client_side=side, secrets=self.secrets,
                                refused=self.unready.get(name))
        conn.on_log, conn.on_updated = self._logged, self._updated
        return conn

    def _updated(self, server: str, uri: str) -> None:
        for listener in list(self.resource_listeners):
            listener(server, uri)

    def _logged(self, line: LogLine) -> None:
        for listener in list(self.log_listeners):
            listener(line)

    async def disable(self, name: str) -> None:
        """Stop server ``name`` and take its tools out of the catalog, for this run."""
        old = self.connections[name]
        await old.close()
        self._replace(name, old.config.model_copy(update={"disabled": True}))

    async def enable(self, name: str, config: ServerConfig | None = None) -> None:
        """Start server ``name`` (again), with ``config`` if given (already expanded)."""
        old = self.connections[name]
        await old.close()
        self._reported.discard(name)
        self._replace(name, (config or old.config).model_copy(update={"disabled": False}))
        self.connections[name].start()

    async def apply(self, servers: Mapping[str, ServerConfig]) -> Changes:
        """Make the running servers match ``servers`` (a reloaded config): new ones start,
        removed ones stop, changed ones restart. A change to the approval lists alone
        (``allow``, ``auto``, ``ask``, ``deny``: what "always allow" writes) restarts
        nothing. Closing and starting happen concurrently."""
        changes = Changes()
        closing = []
        for name in [n for n in self.connections if n not in servers]:
            closing.append(self.connections.pop(name).close())
            self._reported.discard(name)
            changes.removed.append(name)
        for name, config in servers.items():
            old = self.connections.get(name)
            if old is not None and same_server(old.config, config):
                old.config = config  # the approval lists; the connection goes on
                continue
            if old is not None:
                closing.append(old.close())
                changes.restarted.append(name)
            else:
                changes.added.append(name)
            self._reported.discard(name)
            self.connections[name] = self._connection(name, config)
        await asyncio.gather(*closing, return_exceptions=True)
        for name in (*changes.added, *changes.restarted):
            self.connections[name].start()
            self._changed(self.connections[name])
        self._rebuild()
        return changes

    async def roots_changed(self) -> None:
        """Tell every connected server its roots changed (it asks again)."""
        await asyncio.gather(*(c.roots_changed() for c in self.connections.values()),
                             return_exceptions=True)

    def _replace(self, name: str, config: ServerConfig) -> None:
        fresh = self._connection(name, config)
        self.connections[name] = fresh
        self._changed(fresh)

    def subscribe(self, listener: Callable[[ServerStatus], None]) -> None:
        """``listener`` gets a server's status each time it changes (state or tools)."""
        self._listeners.append(listener)

    def _changed(self, conn: ServerConnection) -> None:
        self._rebuild()
        status = conn.status()
        for listener in self._listeners:
            listener(status)

    def _rebuild(self) -> None:
        # An idle server's tools stay offered: a call starts it again.
        live = [c for c in self.connections.values()
                if c.state in ("connected", "degraded", "idle")]
        offered = {c.name: [t for t in c.tools if c.offers(t)]
                   + resource_tools(c.has_resources, c.tools) for c in live}
        names = catalog_names((c.name, t.name) for c in live for t in offered[c.name])
        catalog: dict[str, Entry] = {}
        for conn in live:
            for tool in offered[conn.name]:
                name = names[(conn.name, tool.name)]
                catalog[name] = Entry(self._spec(name, conn, tool), _retry_safe(tool),
                                      isinstance(tool, ResourceTool))
        self._catalog = catalog

    @staticmethod
    def _spec(name: str, conn: ServerConnection, tool: Any) -> ToolSpec:
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        if schema.get("type") != "object":
            schema = {"type": "object", "properties": {}, **schema, }
            schema["type"] = "object"
        description = clean(tool.description or tool.title or "")
        output = getattr(tool, "output_schema", None)
        return ToolSpec(name=name, server=conn.name, tool=tool.name, description=description,
                        parameters=schema,
                        timeout=conn.config.max_call_time + SPEC_MARGIN,
                        fingerprint=fingerprint(tool.name, tool.description, tool.input_schema),
                        output_schema=output if isinstance(output, dict) else None,
                        hints=hints_of(getattr(tool, "annotations", None)),
                        asks=asks_of(getattr(tool, "meta", None)))

    # -- ToolSource --------------------------------------------------------------

    def specs(self) -> list[ToolSpec]:
        return [entry.spec for entry in self._catalog.values()]

    async def prepare(self) -> AsyncIterator[str]:
        """Before a turn: wait for servers still starting (each up to its start-up timeout),
        and refresh tool lists older than their TTL. A lazy server that has never run starts
        now: the turn needs its tools. Yields notes for the user."""
        self._wake_lazy()
        starting = [c for c in self.connections.values() if not c.settled]
        waits = [asyncio.ensure_future(c.wait_started(c.config.startup_timeout + 1))
                 for c in starting]
        try:
            if waits:
                # A turn often begins as the servers do: a command that is not there fails
                # within moments, and is told as not available below, not as starting.
                await asyncio.wait(waits, timeout=NOTE_AFTER)
            still = [c for c in starting if not c.settled]
            if still:
                longest = max(c.config.startup_timeout for c in still)
                yield (f"waiting for {len(still)} MCP server(s) still starting: "
                       f"{', '.join(safe_name(c.name) for c in still)} (up to {longest:g} s)")
            if waits:
                await asyncio.gather(*waits)
        finally:
            for wait in waits:
                wait.cancel()
        if starting:
            late = [safe_name(c.name) for c in starting if not c.settled]
            if late:
                yield f"going on without {', '.join(late)}: still starting"
        for conn in self.connections.values():
            if conn.state == "failed" and conn.name not in self._reported:
                self._reported.add(conn.name)
                yield (f"MCP server '{safe_name(conn.name)}' is not available: "
                       f"{conn.last_error}")
        await asyncio.gather(*(c.refresh_if_stale() for c in self.connections.values()))

    async def call(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        conn = self.connections.get(spec.server)
        entry = self._catalog.get(spec.name)
        if conn is None or entry is None or entry.spec.tool != spec.tool:
            return ToolOutcome(f"error: {spec.name} is no longer available (server "
                               f"'{spec.server}' is {conn.state if conn else 'unknown'})",
                               is_error=True)
        if spec.fingerprint and entry.spec.fingerprint != spec.fingerprint:
            return ToolOutcome(f"error: not run: the server changed the definition of "
                               f"{spec.name} after it was offered and approved; call it again "
                               "to have the new definition approved", is_error=True)
        started = time.monotonic()
        if entry.local:
            try:
                return await run_resource_tool(conn, spec.tool, arguments)
            except Exception as exc:
                return ToolOutcome(f"error: server '{spec.server}' could not "
                                   f"{spec.tool.replace('_', ' ')}: {describe_error(exc)}",
                                   is_error=True)
        try:
            result = await conn.call(spec.tool, arguments, retry_safe=entry.retry_safe)
        except ServerError as exc:
            self.metrics.record(spec.server, spec.tool, time.monotonic() - started,
                                "timeout" if exc.timeout else "error", 0)
            return ToolOutcome(f"error: {exc}", is_error=True)
        rendered = render(result)
        self.metrics.record(spec.server, spec.tool, time.monotonic() - started,
                            "error" if rendered.is_error else "ok",
                            utf8_size(rendered.text))
        return ToolOutcome(rendered.text, rendered.is_error, rendered.value, rendered.media)

    def stats(self) -> dict[str, Any]:
        """Calls, errors, timeouts, p50/p95 latency and bytes per server and tool, with
        each server's restarts and circuit-breaker trips (JSON-ready)."""
        return self.metrics.report({
            name: {"restarts": conn.restarts, "breaker_trips": conn.breaker.trips}
            for name, conn in self.connections.items()})

    # -- status ------------------------------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        return [c.status() for c in self.connections.values()]

    def instructions(self) -> dict[str, str]:
        """Each server's ``instructions``, for the servers whose tools are offered now."""
        offered = {e.spec.server for e in self._catalog.values()}
        return {name: conn.instructions for name, conn in self.connections.items()
                if name in offered and conn.instructions}

    def tools_of(self, server: str) -> list[ToolSpec]:
        return [e.spec for e in self._catalog.values() if e.spec.server == server]

    def resource_tools_of(self, server: str) -> int:
        """How many of the server's offered tools are tui-agent's, for its resources."""
        return sum(e.local for e in self._catalog.values() if e.spec.server == server)

    async def wait_all(self) -> None:
        """Wait until every server has finished its first start (``tui-agent servers``)."""
        self._wake_lazy()
        await asyncio.gather(*(c.wait_started(c.config.startup_timeout + 1)
                               for c in self.connections.values()))

    def _wake_lazy(self) -> None:
        for conn in self.connections.values():
            if conn.never_started and conn.state != "disabled":
                conn.demand()


RULE_LISTS = {"allow", "auto", "ask", "deny"}


def same_server(a: ServerConfig, b: ServerConfig) -> bool:
    """Equal but for the approval lists, which the policy applies without a restart."""
    return a.model_dump(exclude=RULE_LISTS) == b.model_dump(exclude=RULE_LISTS)


@dataclass
class Changes:
    """What :meth:`Hub.apply` did, by server name."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    restarted: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.restarted)


def _retry_safe(tool: Any) -> bool:
    notes = getattr(tool, "annotations", None)
    return bool(notes and (getattr(notes, "read_only_hint", None)
                           or getattr(notes, "idempotent_hint", None)))
