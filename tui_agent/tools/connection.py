"""One MCP server as the hub sees it: :class:`ServerConnection` is the server's
:class:`~tui_agent.tools.lifecycle.ServerLifecycle` (its logins' part in
:mod:`~tui_agent.tools.login_wait`, its calls in :mod:`~tui_agent.tools.call_path`) plus
what it tells beyond its tools (instructions, resources and their changes, skills, log
lines) and its status.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tui_agent.config.interpolate import mask, mask_said
from tui_agent.tools.call_path import CallPath
from tui_agent.tools.client import instructions_of
from tui_agent.tools.lifecycle import State
from tui_agent.tools.news import SEVERE, LogLine, log_line
from tui_agent.tools.server_log import STDERR_TAIL_LINES, stderr_tail
from tui_agent.tools.skills.listing import Found, look_for_skills
from tui_agent.tools.tasks import server_runs_tasks, why_not_offered
from tui_agent.tools.text import clean

RESOURCE_LOOK = 5.0
"""Seconds a server's first resource listing may take at connect."""


async def has_resources(client: Any, within: float = RESOURCE_LOOK) -> bool:
    """The server declares resources and lists at least one resource or template (many
    declare the capability with nothing behind it). A listing that fails, or takes longer
    than ``within`` seconds, counts as none: the server starts all the same."""
    import anyio

    if client.server_capabilities.resources is None:
        return False
    for method, field in (("list_resources", "resources"),
                          ("list_resource_templates", "resource_templates")):
        with anyio.move_on_after(within):
            try:
                if getattr(await getattr(client, method)(), field):
                    return True
            except Exception:  # noqa: S112 (a server that cannot list has none to offer)
                continue
    return False


LOG_LINES = 200
"""Log lines of a server kept for the servers screen."""


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """A snapshot of one server for a front end."""

    name: str
    state: State
    transport: str
    tools: int
    last_error: str | None
    stderr: tuple[str, ...]
    protocol: str | None
    server_info: str | None
    restarts: int
    circuit: str
    log_file: Path | None
    logs: tuple[str, ...] = ()
    """The last lines the server logged (``level: text``), oldest first."""
    held_back: tuple[str, ...] = ()
    """Tools of the server not offered to the model, each with why."""
    instructions: str | None = None
    """What the server says about using it, as the model gets it."""

    def masked(self, secrets: frozenset[str]) -> ServerStatus:
        """This status with ``secrets`` (and the tokens learned at run time) masked in
        what the server said (its last error, stderr, log lines, instructions): a front
        end shows these as they are, and a server's stderr can echo its env's token. Its
        last error, stderr and log lines are free text: a value after a secret's name
        (``token=``, ``password=``) or a ``Bearer`` credential is masked too
        (:func:`~tui_agent.config.interpolate.mask_said`)."""
        return replace(
            self, last_error=None if self.last_error is None
            else mask_said(self.last_error, secrets),
            stderr=tuple(mask_said(line, secrets) for line in self.stderr),
            logs=tuple(mask_said(line, secrets) for line in self.logs),
            held_back=tuple(mask(line, secrets) for line in self.held_back),
            instructions=None if self.instructions is None
            else mask(self.instructions, secrets))


class ServerConnection(CallPath):
    """One configured server, from start to close, and the calls made to it; the last
    lines it logged (``logs``), each also told to ``on_log`` and, when a warning or worse,
    to the calls in flight."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.logs: deque[LogLine] = deque(maxlen=LOG_LINES)
        self.on_log: Callable[[LogLine], None] | None = None
        outer = self.side.logging

        async def logged(params: Any) -> None:
            line = log_line(self.name, params)
            self.logs.append(line)
            if self.on_log is not None:
                self.on_log(line)
            if line.level in SEVERE:
                for news in list(self._listening):
                    news(line)
            if outer is not None:
                await outer(params)

        self.side = replace(self.side, logging=logged)
        self.instructions: str | None = None
        """What the server says about using it (``instructions``), cleaned and capped."""
        self.has_resources = False
        """The server offers resources (its model-facing resource tools are listed)."""
        self.watched: set[str] = set()
        """Resources followed for changes (:meth:`watch`)."""
        self.on_updated: Callable[[str, str], None] | None = None
        """Told ``(server, uri)`` when a watched resource changed."""
        self._relisten = asyncio.Event()
        self.takes_tasks = False
        """The server took task-augmented ``tools/call`` when it last connected (an idle
        server's task tools stay offered: a call starts it again)."""
        self.skills = Found()
        """The skills the server listed when it last connected (SEP-2640)."""
        self.refused_skills: dict[str, tuple[str, str]] = {}
        """Skill URI -> (its ``digest_key`` when refused, why): a refusal holds while the
        server lists the skill the same way (:mod:`~tui_agent.tools.skills.shelf`)."""
        self.skill_bytes: dict[str, int] = {}
        """Skill URI -> bytes read of it (a dynamic skill's are capped)."""

    async def _connect(self, stack: Any) -> Any:
        client = await super()._connect(stack)
        self.instructions = instructions_of(client)
        # A session pinned to 2026-07-28 skips server/discover and so never learns the
        # server's extensions: its calls declare tasks all the same, so its task-only tools
        # are offered (a server that cannot run one says so in its answer).
        self.takes_tasks = server_runs_tasks(client) or self.config.protocol == "2026-07-28"
        self.has_resources = await has_resources(client)
        self.skills = await look_for_skills(client, self.name)
        return client

    async def watch(self, uri: str) -> bool:
        """Follow changes of resource ``uri``: ``resources/subscribe`` on a 2025 session
        whose server can, the ``subscriptions/listen`` stream (reopened with it) on
        2026-07-28. False when the server cannot say."""
        client = self._client
        if self.state != "connected" or client is None:
            return False
        legacy = (self.protocol or "").startswith("2025")
        resources = client.server_capabilities.resources
        if legacy and not (resources and resources.subscribe):
            return False
        if uri not in self.watched:
            self.watched.add(uri)
            if legacy:
                await self.request(lambda c: c.subscribe_resource(uri))
            else:
                self._relisten.set()
        return True

    def _updated(self, uri: str) -> None:
        if uri in self.watched and self.on_updated is not None:
            self.on_updated(self.name, uri)

    async def _on_message(self, message: Any) -> None:
        if type(message).__name__ == "ResourceUpdatedNotification":
            self._updated(str(message.params.uri))
        await super()._on_message(message)

    async def _listen(self, client: Any) -> None:
        """2026 servers announce tool changes and watched resources' changes through a
        subscription, reopened when a resource is added to it."""
        import contextlib

        import anyio
        from mcp.client.subscriptions import ResourceUpdated

        while True:
            self._relisten.clear()
            with contextlib.suppress(Exception):
                async with client.listen(tools_list_changed=True,
                                         resource_subscriptions=sorted(self.watched)) as events, \
                        anyio.create_task_group() as group:
                    async def again() -> None:
                        await self._relisten.wait()
                        group.cancel_scope.cancel()

                    group.start_soon(again)
                    async for event in events:
                        if isinstance(event, ResourceUpdated):
                            self._updated(str(event.uri))
                        else:
                            self._refresh_wanted.set()
                    group.cancel_scope.cancel()
            await self._relisten.wait()

    async def roots_changed(self) -> None:
        """``notifications/roots/list_changed``, if connected in a 2025 protocol and offered
        roots (in 2026-07-28 a server asks for them with each request that needs them)."""
        import warnings

        if self.state == "connected" and self._client is not None and \
                self.side.list_roots is not None and (self.protocol or "").startswith("2025"):
            with warnings.catch_warnings():  # deprecated in 2026-07-28 only (SEP-2577)
                warnings.simplefilter("ignore")
                await self._client.session.send_roots_list_changed()

    def offers(self, tool: Any) -> bool:
        """``tool`` can be called here (one that runs only as a task needs a server, and a
        protocol, that take task calls: :mod:`~tui_agent.tools.tasks`)."""
        return why_not_offered(tool, self.protocol, self.takes_tasks) is None

    # -- reporting ---------------------------------------------------------------

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> list[str]:
        """The last lines the server wrote to stderr since it last started."""
        if self._log is not None:
            self._log.flush()  # what is still in the pipe
        return stderr_tail(self.log_path, lines)

    def status(self) -> ServerStatus:
        return ServerStatus(self.name, self.state, self.config.transport or "?", len(self.tools),
                            self.last_error, tuple(self.stderr_tail()), self.protocol,
                            self.server_info, self.restarts, self.breaker.state, self.log_path,
                            tuple(f"{line.level}: {line.text}" for line in
                                  list(self.logs)[-STDERR_TAIL_LINES:]),
                            tuple(f"{clean(t.name)}: {why}" for t in self.tools
                                  if (why := why_not_offered(t, self.protocol,
                                                             self.takes_tasks))),
                            self.instructions)


