"""What a front end offers the servers beyond calling their tools: the person to ask
(elicitation), its model (sampling, through the person) and the directories they may work
in (roots). :meth:`FrontDesk.side` adds it
to a server's :class:`ClientSide` (whose auth the logins gave), so the SDK declares exactly
what is offered, and nothing for a front end that offers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide
from tui_agent.tools.elicit import Ask, elicitation_handler
from tui_agent.tools.roots import list_roots_handler, roots_of
from tui_agent.tools.sampling import Sampler, sampling_handler


@dataclass
class FrontDesk:
    """The front end's side of the client protocol, for every server of a hub."""

    ask: Ask | None = None
    """How a server's question reaches the person (a modal, a terminal, a policy)."""
    project: Path | None = None
    """The project directory, the first root; None offers no roots at all."""
    shared_roots: list[str] = field(default_factory=list)
    """``[agent] roots``; a reload that changes them replaces this list."""
    sampler: Sampler | None = None
    """How a server's request for the model is judged and run; None declares no
    sampling."""

    def side(self, name: str, config: ServerConfig, base: ClientSide) -> ClientSide:
        """``base`` (the server's auth), with what this front end offers ``name``."""
        side = base
        if self.ask is not None:
            side = replace(side, elicitation=elicitation_handler(name, self.ask))
        if self.project is not None:
            project = self.project
            side = replace(side, list_roots=list_roots_handler(
                lambda: roots_of(config, self.shared_roots, project)))
        if self.sampler is not None:
            side = replace(side, sampling=sampling_handler(name, self.sampler))
        if config.log_level is not None:
            side = replace(side, log_level=config.log_level)
        return side
