"""Where the built-in server may work: its working directory (a relative path starts
there), the roots it may touch (the client's MCP roots, kept current by
:mod:`tui_agent.builtin.roots`, plus the ``--root`` folders it was started with), and the
hook called before every write (the checkpoint part fills it to keep the file's previous
content). Every path a tool is given is resolved here, symlinks followed, and refused with
a message naming it and the roots when it lands outside them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError


class Refused(ToolError):
    """A path or a file the tools will not touch; its message is the model's to read."""


@dataclass
class Workspace:
    """The working directory, the roots and the write hook of one server."""

    cwd: Path
    fixed_roots: list[Path] = field(default_factory=list)
    """``--root DIR`` folders: always roots, whatever the client offers."""
    before_write: Callable[[Path], None] | None = None
    """Called with the resolved path before every ``edit`` and ``write`` (the file may not
    exist yet): the checkpoint part keeps its previous content."""
    client_roots: list[Path] | None = None
    """The client's MCP roots as last listed; None: not asked yet, or changed since."""

    def roots(self) -> list[Path]:
        """Every folder the tools may touch (resolved, each once). Without any (a client
        that offers no roots and no ``--root``), the working directory."""
        found: list[Path] = []
        for root in [*self.fixed_roots, *(self.client_roots or [])]:
            real = Path(os.path.realpath(root))
            if real not in found:
                found.append(real)
        return found or [Path(os.path.realpath(self.cwd))]

    def resolve(self, raw: str, *, what: str = "path") -> Path:
        """``raw`` as a real path inside the roots (``~`` expanded, relative to the working
        directory, ``..`` and symlinks followed); :class:`Refused` otherwise."""
        if not isinstance(raw, str) or not raw.strip():
            raise Refused(f"the {what} is empty: give a file or folder path")
        if "\0" in raw:
            raise Refused(f"the {what} {raw!r} holds a NUL character")
        given = Path(os.path.expanduser(raw))
        real = Path(os.path.realpath(given if given.is_absolute() else self.cwd / given))
        roots = self.roots()
        if not any(real == root or real.is_relative_to(root) for root in roots):
            via = "" if str(real) == os.path.normpath(str(self.cwd / given)) else \
                f" (it leads to {real})"
            raise Refused(f"{raw} is outside the folders this server may touch{via}: "
                          f"{', '.join(map(str, roots))}. Ask the user to add its folder "
                          "(tui-agent --add-dir DIR, or [agent] roots)")
        return real

    def shown(self, path: Path) -> str:
        """``path`` as tools print it: relative to the working directory when inside it."""
        cwd = Path(os.path.realpath(self.cwd))
        return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)

    def writing(self, path: Path) -> None:
        """Tell the write hook (if any) that ``path`` is about to change."""
        if self.before_write is not None:
            self.before_write(path)
