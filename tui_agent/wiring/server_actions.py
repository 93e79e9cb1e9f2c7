"""What a front end asks of the running servers, for :class:`~tui_agent.wiring.runtime.Runtime`:
their statuses and tools, logins, reconnecting, switching one on or off, their prompts
and resources (listed, completed, attached, watched)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tui_agent.wiring import mcp_context

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.core.agent import Agent
    from tui_agent.core.session import SessionWriter
    from tui_agent.tools.completion import Completing
    from tui_agent.tools.connection import ServerStatus
    from tui_agent.tools.hub import Hub
    from tui_agent.tools.prompts import PromptInfo
    from tui_agent.wiring.app_logins import AppLogins


class ServerActions:
    """The servers' side of a :class:`~tui_agent.wiring.runtime.Runtime` (which sets these
    attributes and makes the session)."""

    hub: Hub | None
    settings: Settings
    agent: Agent
    app_logins: AppLogins
    login_pages: list[Callable[[str, str], None]]
    """Told ``(server, url)`` when a login a person asked for wants its page shown."""

    def ensure_session(self) -> SessionWriter:
        raise NotImplementedError

    def statuses(self) -> list[ServerStatus]:
        """Each server's status with the settings' secrets masked in what it said: the
        front end shows its last error, stderr and log lines as they are."""
        if self.hub is None:
            return []
        return [s.masked(self.settings.secrets) for s in self.hub.statuses()]

    def tools_of(self, server: str) -> list[Any]:
        return self.hub.tools_of(server) if self.hub is not None else []

    def login(self, name: str) -> str:
        """``l`` on the servers screen (:meth:`AppLogins.login`)."""
        return self.app_logins.login(name)

    async def login_outcome(self, name: str) -> tuple[bool, str] | None:
        """How the login :meth:`login` started ended (:meth:`AppLogins.outcome`)."""
        return await self.app_logins.outcome(name)

    def login_status(self, name: str) -> str | None:
        """A server's login line (:meth:`AppLogins.status`)."""
        return self.app_logins.status(name)

    def _show_login(self, name: str, url: str) -> None:
        from tui_agent.tools.auth.browser import open_in_browser

        for show in self.login_pages:
            show(name, url)
        open_in_browser(url)

    def reconnect(self, name: str) -> None:
        if self.hub is not None:
            self.hub.connections[name].reconnect()

    async def enable(self, name: str) -> str | None:
        from tui_agent.config import ConfigError
        from tui_agent.config.loader import enabled_copy

        if self.hub is None:
            return "no MCP servers"
        try:
            config = enabled_copy(self.settings, name)
        except ConfigError as exc:
            return str(exc)
        await self.hub.enable(name, config)
        return None

    async def disable(self, name: str) -> None:
        if self.hub is not None:
            await self.hub.disable(name)

    async def prompts(self) -> list[tuple[str, str]]:
        """``(server:prompt, description)`` of every prompt the servers offer."""
        return await mcp_context.prompt_list(self.hub)

    async def resources(self) -> list[tuple[str, str]]:
        """``(server:uri, label)`` of every resource the servers list, then
        ``(TEMPLATE + server:template, label)`` of every resource template."""
        return await mcp_context.resource_list(self.hub)

    async def complete(self, server: str, target: Completing, name: str, value: str,
                       context: dict[str, str]) -> list[str]:
        """The server's suggestions for a template's variable or a prompt's argument
        (none if it has none)."""
        from tui_agent.tools.completion import complete

        if self.hub is None or server not in self.hub.connections:
            return []
        return await complete(self.hub.connections[server], target, name, value, context)

    async def prompt_turn(self, server: str, name: str, definition: PromptInfo | None,
                          arguments: dict[str, str]) -> str:
        """Put a server's prompt into the conversation, roles kept; the text of the turn
        it starts. ``definition``: the prompt as its server lists it, looked up by the
        caller (:func:`~tui_agent.tools.prompts.find_prompt`), which asks for the missing
        arguments first. Raises ``ValueError`` or ``ServerError``."""
        earlier, text = await mcp_context.defined_prompt_turn(self.hub, server, name,
                                                              definition, arguments)
        self.ensure_session()
        self.agent.add_messages(earlier)
        return text

    async def watch(self, ref: str) -> bool:
        """Follow changes of the resource ``server:uri``; False when its server cannot."""
        server, _, uri = ref.partition(":")
        conn = self.hub.connections.get(server) if self.hub is not None else None
        try:
            return conn is not None and await conn.watch(uri)
        except Exception:  # a refused subscription: the resource is attached all the same
            return False

    async def attachment(self, ref: str) -> str:
        """A resource (``server:uri``) as a block to put before the next message."""
        return await mcp_context.attachment(self.hub, ref)
