"""What :mod:`tests.bench.bench_builtin_files` needs to take the read + edit round trip
apart: the built-in server with one more tool, ``noop`` (the floor: a call that does
nothing), runnable on stdio (``python -m tests.bench._builtin_seams --root DIR``) or
in this process over the SDK's memory transport (:func:`in_memory`, a prototype: the
hub's own stdio is swapped for the memory streams of a server built here, so the rest of
the hub's call path is the one a real call takes); timing seams on the checkpoint's steps
(:class:`Seams`); and the safe baseline (what an edit must do for safety, done directly).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from tui_agent.builtin.server import build_server, keep_checkpoints, parts
from tui_agent.builtin.workspace import Workspace

IN_MEMORY = "in-memory"
"""The ``command`` of a server config :func:`in_memory` serves in this process."""


def add_noop(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="noop", description="Do nothing (the bench's floor).")
    async def noop() -> str:
        return "ok"


def file_server(root: Path) -> MCPServer:
    """The built-in server's file tools with their checkpoints, and ``noop`` (no shell:
    its subprocesses stay out of this process)."""
    workspace = Workspace(cwd=root, fixed_roots=[root])
    return build_server(workspace, [keep_checkpoints, add_noop])


@contextlib.contextmanager
def in_memory(root: Path) -> Iterator[None]:
    """While open, a hub server whose ``command`` is :data:`IN_MEMORY` is
    :func:`file_server` over the SDK's memory transport, in this process."""
    from mcp.client._memory import InMemoryTransport

    from tui_agent.tools.transports import sdk

    real = sdk.open_transport

    async def open_transport(config: Any, *args: Any, **kwargs: Any) -> Any:
        if config.command == IN_MEMORY:
            return InMemoryTransport(file_server(root))
        return await real(config, *args, **kwargs)

    sdk.open_transport = open_transport
    try:
        yield
    finally:
        sdk.open_transport = real


class Seams:
    """Time spent in wrapped functions, by label (seconds, summed; calls counted)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.spent[label] += time.perf_counter() - started
                self.calls[label] += 1

        setattr(owner, name, timed)
        self._undo.append(lambda: setattr(owner, name, inner))

    def reset(self) -> None:
        self.spent.clear()
        self.calls.clear()

    def undo(self) -> None:
        for step in reversed(self._undo):
            step()
        self._undo.clear()


def checkpoint_seams() -> Seams:
    """Seams on the checkpoint's steps: the whole keep, the blob's write (fsynced), the
    journal's append (fsynced), the journal read back (twice a keep), the trim."""
    from tui_agent.builtin.checkpoints import blobs, journal, store
    from tui_agent.builtin.files import guard

    seams = Seams()
    seams.wrap(store.Checkpoints, "keep", "checkpoint keep (all of it)")
    seams.wrap(blobs.Blobs, "put", "  blob write + fsync")
    seams.wrap(journal, "append", "  journal append + fsync")
    seams.wrap(store.Checkpoints, "lines", "  journal read + parse")
    seams.wrap(store.Checkpoints, "_trim", "  trim (reads it again, stats blobs)")
    seams.wrap(guard, "replace_file", "edit's temp + rename (no fsync)")
    return seams


def fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def safe_read_write(target: Path, store: Path, old: bytes, new: bytes) -> None:
    """What an edit must do for safety, done directly: read the file, keep a copy named by
    its digest (written to a temporary name, fsynced, renamed) and one fsynced journal
    line, then write the new content (``old`` replaced by ``new``) to a temporary file,
    fsync it and rename it over the file."""
    data = target.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    blob = store / digest
    if not blob.exists():
        fsync_write(store / f"{digest}.tmp", data)
        os.replace(store / f"{digest}.tmp", blob)
    fd = os.open(store / "journal", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f'{{"path":"{target}","blob":"{digest}"}}\n'.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    temporary = target.with_name(f".{target.name}.tmp")
    fsync_write(temporary, data.replace(old, new, 1))
    os.replace(temporary, target)


def main() -> None:
    """The built-in server (its shell and checkpoints as ``tui-agent tools serve`` has
    them) and ``noop``, on stdio."""
    import anyio

    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, required=True)
    root = parser.parse_args().root.resolve()
    workspace = Workspace(cwd=Path.cwd(), fixed_roots=[root])
    server = build_server(workspace, [*parts(), add_noop])
    anyio.run(server.run_stdio_async)


if __name__ == "__main__":
    main()
