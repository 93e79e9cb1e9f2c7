"""Per-run and per-conversation tool filters: ``--servers``, ``--exclude-servers``,
``--tools``, ``--exclude-tools`` on the command line, and the ``/tools`` screen's
switches in the chat app.

A filter only ever narrows: a tool is offered when the config's rules allow it *and*
the filter lets it through. Patterns are globs. A tool pattern with ``__`` is matched
against ``server__tool``; one without is matched against the tool's own name on
every server (``--exclude-tools 'write_*'``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.config import Settings

SEP = "__"


def split(values: Iterable[str] | None) -> tuple[str, ...] | None:
    """``--tools a,b --tools c`` -> ``("a", "b", "c")``; None when the flag was not given."""
    if values is None:
        return None
    return tuple(p.strip() for value in values for p in value.split(",") if p.strip())


def _tool_matches(pattern: str, server: str, tool: str) -> bool:
    if SEP in pattern:
        return fnmatchcase(f"{server}{SEP}{tool}", pattern)
    return fnmatchcase(tool, pattern)


@dataclass(frozen=True)
class ToolFilter:
    """Which servers and tools this run (or conversation) may use, within the config."""

    servers: tuple[str, ...] | None = None
    """Only servers matching one of these (None: all)."""
    exclude_servers: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    """Only tools matching one of these (None: all)."""
    exclude_tools: tuple[str, ...] = ()
    off: frozenset[str] = field(default_factory=frozenset)
    """Switched off in the ``/tools`` screen: ``server`` or ``server__tool`` names."""

    def server_on(self, server: str) -> bool:
        if self.servers is not None and not any(fnmatchcase(server, p) for p in self.servers):
            return False
        return not any(fnmatchcase(server, p) for p in self.exclude_servers)

    def _switched_off(self, server: str, tool: str) -> bool:
        return server in self.off or f"{server}{SEP}{tool}" in self.off

    def allows(self, server: str, tool: str) -> bool:
        if self._switched_off(server, tool):
            return False
        if not self.server_on(server):
            return False
        if self.tools is not None and not any(_tool_matches(p, server, tool)
                                              for p in self.tools):
            return False
        return not any(_tool_matches(p, server, tool) for p in self.exclude_tools)

    def why_not(self, server: str, tool: str) -> str:
        """Why :meth:`allows` said no, for the model and the user."""
        if self._switched_off(server, tool):
            return f"{tool} of {server} is switched off for this conversation (/tools)"
        return f"{tool} of {server} is left out of this run (--servers, --tools and their " \
               "--exclude- forms)"

    def switched(self, name: str, on: bool) -> ToolFilter:
        """This filter with ``name`` (a server, or ``server__tool``) switched on or off."""
        return replace(self, off=self.off - {name} if on else self.off | {name})

    def narrow(self, settings: Settings) -> str | None:
        """Leave the servers this filter excludes out of ``settings`` (so they are not
        started at all); a problem to report when a server pattern names no configured
        server."""
        unknown = self.unknown_servers(settings.config.servers)
        if unknown:
            names = ", ".join(settings.config.servers) or "none"
            return (f"--servers/--exclude-servers: {', '.join(map(repr, unknown))} names no "
                    f"configured server (configured: {names})")
        settings.config.servers = {n: s for n, s in settings.config.servers.items()
                                   if self.server_on(n)}
        return None

    def unknown_servers(self, configured: Iterable[str]) -> list[str]:
        """Server patterns (of ``--servers`` and ``--exclude-servers``) that name no
        configured server: a typo to report, not a filter to apply silently."""
        names = list(configured)
        return [p for p in (*(self.servers or ()), *self.exclude_servers)
                if not any(fnmatchcase(n, p) for n in names)]

    def unmatched_tools(self, tools: Iterable[tuple[str, str]]) -> list[str]:
        """Tool patterns that match none of ``(server, tool)``."""
        found = list(tools)
        return [p for p in (*(self.tools or ()), *self.exclude_tools)
                if not any(_tool_matches(p, s, t) for s, t in found)]
