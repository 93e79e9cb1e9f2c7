"""grep's fast engine: ``rg --json``, streamed. Its output is read an event at a time
(never held whole: ``grep .`` over a large tree is gigabytes), rg is killed once more lines
than one answer shows have come, or at :data:`~.found.TIMEOUT` (what came by then is
answered, with a note), and a file in a place that holds secrets (tui-agent's data folder
when the search is over the home) is dropped from the output. ``--max-columns`` keeps long
lines short in rg's text output; its JSON output ignores it, so one event is read up to
:data:`LONGEST_EVENT` bytes and a longer one is dropped with a note."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import IO

from tui_agent.builtin.files.found import TIMEOUT, Found, Hits
from tui_agent.builtin.workspace import Refused, Workspace

LONGEST_EVENT = 1024 * 1024
"""Bytes of one JSON event read; a match in a longer line is dropped, with a note."""
COLUMNS = 4096
"""rg's ``--max-columns``."""


def ripgrep(workspace: Workspace, rg: str, pattern: str, where: Path, glob: str | None,
            context: int) -> Hits:
    command = [rg, "--json", "--no-config", "--max-columns", str(COLUMNS), "-e", pattern]
    if glob:
        command += ["-g", glob]
    if context:
        command += ["-C", str(context)]
    process = subprocess.Popen([*command, "--", str(where)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    late = threading.Event()

    def stop() -> None:
        late.set()
        process.kill()

    timer = threading.Timer(TIMEOUT, stop)
    timer.start()
    hits = Hits()
    try:
        assert process.stdout is not None
        events = _read(workspace, process.stdout, hits)
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
        _, err = process.communicate()
    if late.is_set() and not hits.more:
        hits.notes.append(f"the search stopped after {TIMEOUT:.0f} s: these are the lines "
                          "found by then; narrow path or glob")
    if process.returncode == 2 and not events:  # a bad pattern: nothing was searched
        said = err.decode("utf-8", "replace").strip()
        raise Refused(f"ripgrep refused the search: {said}")
    return hits


def _read(workspace: Workspace, out: IO[bytes], hits: Hits) -> int:
    """Read rg's events into ``hits`` until the end or enough; how many were read."""
    allowed: dict[str, bool] = {}
    dropped = events = 0
    while not hits.full():
        raw = out.readline(LONGEST_EVENT)
        if not raw:
            break
        events += 1
        if not raw.endswith(b"\n"):
            while (rest := out.readline(LONGEST_EVENT)) and not rest.endswith(b"\n"):
                pass
            dropped += 1
            continue
        event = json.loads(raw)
        if event["type"] not in ("match", "context"):
            continue
        data = event["data"]
        text, name = data["lines"].get("text"), data["path"].get("text")
        if text is None or name is None:  # not UTF-8: ripgrep gives it as bytes
            continue
        if name not in allowed:
            allowed[name] = workspace.allowed(Path(os.path.realpath(name)))
        if allowed[name]:
            hits.files.setdefault(Path(name), Found()).lines[data["line_number"]] = (
                event["type"] == "match", text.rstrip("\r\n"))
    if dropped:
        hits.notes.append(f"{dropped} lines over {LONGEST_EVENT >> 20} MB were not shown")
    return events
