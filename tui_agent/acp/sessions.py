"""One ACP session: a conversation of tui-agent (its session file, whose id is the ACP
session id, so ``session/load`` finds it again), the agent that runs it with the editor's
gate, and the MCP servers it uses: the configured ones plus those the editor handed over
in ``session/new`` / ``session/load``, under the editor's names (``editor-NAME`` when
the config already has a server of that name).

Each session has a hub of its own, since each may bring its own servers; the project
directory (the first root a server is offered, and where relative paths and ``@`` files
start) is the editor's ``cwd``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

from tui_agent.config import Settings
from tui_agent.config.models import ServerConfig
from tui_agent.core.agent import Agent
from tui_agent.core.events import ContextSize
from tui_agent.core.filters import ToolFilter
from tui_agent.core.permissions import Gate
from tui_agent.core.session import Conversation
from tui_agent.custom.registry import Registry
from tui_agent.wiring import build
from tui_agent.wiring.model_choice import ModelChoice
from tui_agent.wiring.subagents import local_agents

if TYPE_CHECKING:
    from tui_agent.tools.hub import Hub

log = logging.getLogger(__name__)
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class SessionSetupError(ValueError):
    """A server the editor handed over cannot be used (named in the message)."""


@dataclass
class AcpSession:
    """A conversation the editor drives."""

    id: str
    agent: Agent
    settings: Settings
    cwd: Path
    models: ModelChoice
    hub: Hub | None = None
    turn: asyncio.Task[Any] | None = None
    last_context: ContextSize | None = None
    prompts: list[tuple[str, str]] = field(default_factory=list)
    """``(server:prompt, description)`` of the servers' MCP prompts, once listed."""
    commands: Registry = field(default_factory=Registry)
    """The commands from files (the user's, a trusted project's), once read."""
    servers: list[Any] = field(default_factory=list)
    """The MCP servers the editor handed over (a released session reopens with them)."""
    roots: tuple[Path, ...] = ()
    """The editor's ``additionalDirectories``: folders of the session beside ``cwd``."""
    levels: tuple[str, ...] | None = None
    """The reasoning levels the model takes, once litellm said (None: not yet)."""
    leveling: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while the levels are learned: one model's at a time, in the order asked."""

    def folders(self) -> list[Path]:
        """Where a prompt's files are read without asking: beside ``cwd``, the editor's
        additional directories and ``[agent] roots``."""
        shared = [Path(os.path.expanduser(r)) for r in self.settings.config.agent.roots]
        return [*self.roots, *(r if r.is_absolute() else self.cwd / r for r in shared)]

    @property
    def code_mode(self) -> bool:
        return self.agent.code_mode is not None and self.agent.code_mode.settings.enabled

    async def reads_images(self) -> bool:
        """Whether the session's model (of the moment: the picker may switch it) reads
        images; in a thread, since the first answer may import litellm or ask the server."""
        takes = getattr(self.agent.llm, "takes", None)
        return takes is not None and "image" in await asyncio.to_thread(takes)

    def set_code_mode(self, on: bool) -> None:
        """Code mode on or off from the next request (the agent reads it live)."""
        if self.agent.code_mode is not None:
            self.agent.code_mode.settings = self.agent.code_mode.settings.model_copy(
                update={"enabled": on})

    async def close(self) -> None:
        if self.turn is not None and not self.turn.done():
            await stop(self.turn)
        await self.agent.session_end("other")  # SessionEnd hooks, bounded by their timeouts
        if self.agent.session is not None:
            with contextlib.suppress(OSError):
                self.agent.session.close()
        if self.hub is not None:
            await self.hub.close()
            build.save_metrics(self.hub, self.agent.session)


CANCEL_AGAIN = 0.25
"""Seconds between two cancellations of a turn that did not end at the first."""
CLOSE_WAIT = 5.0
"""Seconds a closing session waits for its turn to end once cancelled: a library that
swallows every cancellation must not hold the editor's shutdown forever."""


async def stop(task: asyncio.Task[Any], wait: float = CLOSE_WAIT) -> bool:
    """Cancel ``task`` (again every :data:`CANCEL_AGAIN` seconds, a library may swallow
    one cancellation) until it ends or ``wait`` seconds pass; whether it ended. One that
    did not is left behind (logged): the servers and the session file close anyway."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while not task.done():
        task.cancel()
        left = deadline - loop.time()
        if left <= 0:
            log.warning("a turn did not end within %gs of being cancelled; closing anyway",
                        wait)
            return False
        await asyncio.wait({task}, timeout=min(CANCEL_AGAIN, left))
    if not task.cancelled():
        with contextlib.suppress(BaseException):
            task.exception()  # retrieved: its error is the turn's, already answered
    return True


def with_servers(settings: Settings, handed: Sequence[Any], cwd: Path) -> Settings:
    """``settings`` with the editor's servers added under their own names; a stdio one
    runs in ``cwd``, the project, as the editor would run it.

    A name the config (or an earlier handed server) already uses becomes ``editor-NAME``
    (then ``editor-NAME-2``, ...): the user's server of that name stays as it is, and the
    rules and "always allow" answers of the user's server (written to its file, through
    ``settings.origins``) never apply to, or come from, the editor's."""
    if not handed:
        return settings
    servers = dict(settings.config.servers)
    for server in handed:
        servers[_free_name(server.name, {*servers, *settings.origins})] = \
            server_config(server, cwd)
    config = settings.config.model_copy(update={"servers": servers})
    return dataclasses.replace(settings, config=config)


def builtin_in(settings: Settings, cwd: Path) -> Settings:
    """``settings`` with the built-in server working in the session's folder: started in
    ``cwd`` (relative paths start there, its shell's sandbox writes there, its checkpoint
    store is that folder's) with ``cwd`` as a root, as the app starts it in its project.
    Without this it would run in the ACP process's folder, wherever the editor started
    it (the home, say), and every session of the process would share it. A ``cwd`` the
    user gave ``[servers.local]`` is kept."""
    from tui_agent.config.builtin_server import is_builtin

    servers = dict(settings.config.servers)
    for name, server in servers.items():
        if is_builtin(server) and server.cwd is None:
            servers[name] = server.model_copy(update={
                "cwd": str(cwd), "args": [*server.args, "--root", str(cwd)]})
    config = settings.config.model_copy(update={"servers": servers})
    return dataclasses.replace(settings, config=config)


def _free_name(wanted: str, taken: set[str]) -> str:
    name = _NAME.sub("_", wanted).strip("_") or "server"
    if name not in taken:
        return name
    base = f"editor-{name}"
    return next(n for n in (base, *(f"{base}-{i}" for i in range(2, len(taken) + 3)))
                if n not in taken)


def server_config(server: Any, cwd: Path) -> ServerConfig:
    """An ACP ``McpServer`` as our ``[servers.NAME]``."""
    if isinstance(server, McpServerStdio):
        return ServerConfig(command=server.command, args=list(server.args), cwd=str(cwd),
                            env={v.name: v.value for v in server.env})
    if isinstance(server, HttpMcpServer | SseMcpServer):
        return ServerConfig(url=server.url, transport="http" if isinstance(
            server, HttpMcpServer) else "sse", headers={h.name: h.value for h in server.headers})
    raise SessionSetupError(f"MCP server {server.name!r}: the {getattr(server, 'type', '?')} "
                            "transport is not supported (stdio, http and sse are)")


def open_session(settings: Settings, tool_filter: ToolFilter, cwd: Path, handed: Sequence[Any],
                 gate_for: Callable[[str], Gate], history: Conversation | None = None,
                 path: Path | None = None) -> AcpSession:
    """A session for the editor: a new conversation (at ``path``: a released one that had
    nothing said in it comes back under its id), or ``history`` continued. ``gate_for``
    makes the session's gate from its id (the gate asks about that session)."""
    from tui_agent.tools.frontdesk import FrontDesk

    settings = builtin_in(with_servers(settings, handed, cwd), cwd)
    models = ModelChoice(lambda: settings)
    llm = models.make()
    writer = build.resumed_session(settings, history) if history is not None \
        else build.new_session(settings, llm.model, path, cwd=cwd)
    try:
        gate: Gate = gate_for(writer.id)
        agent = build.agent(settings, llm, gate, build.policy_from(settings, tool_filter),
                            session=writer, history=history, cwd=cwd)
        build.local_skills(settings, agent.skills)
        local_agents(settings, agent, cwd)
        if history is not None:
            agent.usage = history.usage
        # Elicitation and sampling are declined (no handler offered) until ACP can ask.
        desk = FrontDesk(project=cwd, shared_roots=list(settings.config.agent.roots))
        hub = build.open_hub(settings, desk=desk)
        if hub is not None:
            hub.start()
            agent.tools = hub
    except BaseException:
        # A session that could not be set up holds no file (one left open would stay
        # locked; a new one would be listed as an empty conversation): closed, a new
        # file with nothing said in it is removed.
        with contextlib.suppress(OSError):
            writer.close()
        raise
    return AcpSession(writer.id, agent, settings, cwd, models, hub)
