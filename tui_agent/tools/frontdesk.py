"""What a front end offers the servers beyond calling their tools: the person to ask
(elicitation). :meth:`FrontDesk.side` adds it to a server's :class:`ClientSide` (whose
auth the logins gave), so the SDK declares exactly what is offered, and nothing for a
front end that offers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide
from tui_agent.tools.elicit import Ask, elicitation_handler


@dataclass
class FrontDesk:
    """The front end's side of the client protocol, for every server of a hub."""

    ask: Ask | None = None
    """How a server's question reaches the person (a modal, a terminal, a policy)."""

    def side(self, name: str, config: ServerConfig, base: ClientSide) -> ClientSide:
        """``base`` (the server's auth), with what this front end offers ``name``."""
        if self.ask is None:
            return base
        return replace(base, elicitation=elicitation_handler(name, self.ask))
