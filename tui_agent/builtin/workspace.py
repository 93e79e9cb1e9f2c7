"""Where the built-in server may work: its working directory (a relative path starts
there), the roots it may touch (the client's MCP roots, kept current by
:mod:`tui_agent.builtin.roots`, plus the ``--root`` folders it was started with), and the
hook called before every write (the checkpoint part fills it to keep the file's previous
content). Every path a tool is given is resolved here, symlinks followed, and refused with
a message naming it and the roots when it lands outside them, or inside a place that holds
secrets (:mod:`tui_agent.builtin.secrets`: ``~/.ssh``, tui-agent's own folders...) even
when a root holds it (a project in the home folder). A path can change between its check
and its open (a symlink swapped in by a background command), so the tools check again
what they opened (:meth:`Workspace.confirm`, on the descriptor)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from tui_agent.builtin.secrets import secret_places


class Refused(ToolError):
    """A path or a file the tools will not touch; its message is the model's to read."""


@dataclass
class Workspace:
    """The working directory, the roots and the write hook of one server."""

    cwd: Path
    fixed_roots: list[Path] = field(default_factory=list)
    """``--root DIR`` folders: always roots, whatever the client offers."""
    before_write: Callable[[Path], str] | None = None
    """Called with the resolved path once the new content is ready beside it, just before
    it replaces the file (the file may not exist yet): the checkpoint part keeps its
    previous content, and returns what the model should be told (empty: nothing)."""
    not_written: Callable[[Path], object] | None = None
    """Called when the write :attr:`before_write` was told of failed after all (the rename
    did not happen): the checkpoint part drops the line it journaled for it."""
    client_roots: list[Path] | None = None
    """The client's MCP roots as last listed; None: not asked yet, or changed since."""
    secrets: list[Path] = field(default_factory=secret_places)
    """Places no tool touches, inside a root or not (default: from the environment)."""

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
        if not self.inside(real, roots):
            via = "" if str(real) == os.path.normpath(str(self.cwd / given)) else \
                f" (it leads to {real})"
            raise Refused(f"{raw} is outside the folders this server may touch{via}: "
                          f"{', '.join(map(str, roots))}. Ask the user to add its folder "
                          "(tui-agent --add-dir DIR, or [agent] roots)")
        place = self.secret(real)
        if place is not None:
            raise Refused(f"{raw} is in {place}, which holds secrets: tui-agent's file "
                          "tools do not read or change it")
        return real

    @staticmethod
    def inside(real: Path, roots: list[Path]) -> bool:
        return any(_under(str(real), str(root)) for root in roots)

    def secret(self, real: Path) -> Path | None:
        """The secret place ``real`` (a resolved path) is in, if any."""
        text = str(real)
        return next((p for p in self.secrets if _under(text, str(p))), None)

    def allowed(self, real: Path) -> bool:
        """``real`` (a resolved path) is inside the roots and in no secret place: a walk
        keeps it (one that is not is skipped without a word)."""
        return self.inside(real, self.roots()) and self.secret(real) is None

    def confirm(self, fd: int, path: Path) -> None:
        """Check that the open descriptor ``fd`` is still ``path`` or at least allowed (a
        folder on the way swapped for a symlink after :meth:`resolve` is caught here);
        :class:`Refused` naming where it led otherwise. Where the system cannot say what
        a descriptor is (no ``/proc``), the open's ``O_NOFOLLOW`` is the only guard."""
        real = opened_path(fd)
        if real is None or real == path or self.allowed(real):
            return
        raise Refused(f"{self.shown(path)} changed while it was opened (it now leads to "
                      f"{real}, outside the folders this server may touch or in a place "
                      "that holds secrets): it is not touched")

    def shown(self, path: Path) -> str:
        """``path`` as tools print it: relative to the working directory when inside it."""
        cwd = Path(os.path.realpath(self.cwd))
        return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)

    def writing(self, path: Path) -> str:
        """Tell the write hook (if any) that ``path`` is about to change; what it says."""
        return self.before_write(path) if self.before_write is not None else ""

    def unwritten(self, path: Path) -> None:
        """Tell the checkpoint part that the write :meth:`writing` announced failed."""
        if self.not_written is not None:
            self.not_written(path)


def _under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it (both absolute and normalised); a string test,
    as ``Path.is_relative_to`` costs tens of microseconds (grep asks it per file)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def opened_path(fd: int) -> Path | None:
    """Where the descriptor ``fd`` really is (Linux: its ``/proc/self/fd`` link; macOS:
    ``F_GETPATH``); None where the system cannot tell."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
    try:
        import fcntl

        query = getattr(fcntl, "F_GETPATH", None)
        if query is None:
            return None
        raw = fcntl.fcntl(fd, query, bytes(1024))
        return Path(os.fsdecode(raw.rstrip(b"\0")))
    except OSError:
        return None
