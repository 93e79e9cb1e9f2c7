"""The progress of calls in flight, as ``tui-agent run --output text`` shows it on stderr,
at a pace a person can read: a server may report thousands of steps a second.

On a terminal one line is rewritten in place (carriage return, clear to the end of the
line), at most :data:`TERMINAL_EVERY` apart; any other output ends that line, so the
last state shown stays above it. In a pipe (a log, CI) each call gets a line of its own
at most every :data:`PIPE_EVERY` seconds. Either way the latest state is never lost: a
report held back is shown when its time comes (a timer on the running event loop), or at
the latest right before the call's result. A report that comes after its call's result
is dropped, and no timer outlives the last result: nothing may rewrite the line under the
reply that streams next to the same terminal. ``--output jsonl`` keeps every report; this
is only the text printer's view of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import unicodedata
from collections.abc import Callable
from typing import IO

from tui_agent.config import mask

TERMINAL_EVERY = 0.1
"""Seconds between two rewrites of the progress line on a terminal (10 a second)."""
PIPE_EVERY = 1.0
"""Seconds between two progress lines of one call in a pipe."""
CLEAR = "\r\x1b[K"
"""Back to the start of the line, and clear it to its end."""


class ProgressLines:
    """Progress lines on ``err``: rewritten in place on a terminal, spaced out in a pipe.
    ``terminal``: whether ``err`` is one (default: asked, ``TERM=dumb`` is not)."""

    def __init__(self, err: IO[str], secrets: frozenset[str] = frozenset(), *,
                 terminal: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.err, self.secrets, self.clock = err, secrets, clock
        self.terminal = _is_terminal(err) if terminal is None else terminal
        self._shown: dict[str, str] = {}
        """The last line shown of each call (the same line is not shown twice)."""
        self._held: dict[str, str] = {}
        """The newest line of each call not shown yet."""
        self._at: dict[str, float] = {}
        """When each call's line was last written (the terminal's one line: key "")."""
        self._live = False
        """A terminal line is being rewritten: it has no newline yet."""
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._finished: set[str] = set()
        """Calls whose result came this turn: a report of theirs is late, not shown."""

    def show(self, call_id: str, line: str) -> None:
        """The call's newest state: written now, or held until its time comes."""
        if call_id in self._finished:
            return
        if self._shown.get(call_id) == line:
            self._held.pop(call_id, None)
            return
        self._held.pop(call_id, None)
        self._held[call_id] = line  # last in the dict: the newest
        key = "" if self.terminal else call_id
        wait = self._at.get(key, -1e9) + self._every - self.clock()
        if wait <= 0:
            self._write(call_id)
        else:
            self._later(key, wait)

    def finish(self, call_id: str) -> None:
        """Before the call's result: its newest state, if it is held back. With nothing
        held any more, no timer is left to write over the output that follows."""
        if call_id in self._held:
            self._write(call_id)
        self._finished.add(call_id)
        self._shown.pop(call_id, None)
        self._at.pop(call_id, None)
        if not self._held:
            self._cancel_timers()

    def end_line(self) -> None:
        """Before any other output: a line being rewritten is finished as it stands."""
        if self._live:
            self.err.write("\n")
            self.err.flush()
            self._live = False

    def close(self) -> None:
        """At the end of a turn: every held state shown, the line ended, no timer left."""
        for call_id in list(self._held):
            self._write(call_id)
        self.end_line()
        self._cancel_timers()
        self._finished.clear()  # a model may use the same call ids next turn

    def _cancel_timers(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    @property
    def _every(self) -> float:
        return TERMINAL_EVERY if self.terminal else PIPE_EVERY

    def _write(self, call_id: str) -> None:
        line = self._held.pop(call_id)
        self._shown[call_id] = line
        self._at["" if self.terminal else call_id] = self.clock()
        text = mask(line, self.secrets)
        if self.terminal:
            self.err.write(CLEAR + _fit(text, _columns(self.err)))
            self._live = True
        else:
            self.err.write(text + "\n")
        self.err.flush()

    def _later(self, key: str, wait: float) -> None:
        """Write what is held for ``key`` once ``wait`` seconds have passed (without a
        running event loop it waits for the call's result or the turn's end)."""
        if key in self._timers:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timers[key] = loop.call_later(wait, self._due, key)

    def _due(self, key: str) -> None:
        self._timers.pop(key, None)
        if key:
            if key in self._held:
                self._write(key)
        elif self._held:  # the one line shows the newest report of any call
            self._write(next(reversed(self._held)))


def _is_terminal(err: IO[str]) -> bool:
    try:
        return err.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _columns(err: IO[str]) -> int:
    """The terminal's width (80 when it cannot be asked)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        columns = os.get_terminal_size(err.fileno()).columns
        if columns > 0:  # a new pseudo-terminal says 0 until someone sets its size
            return columns
    return 80


def _fit(text: str, columns: int) -> str:
    """``text`` cut to fit one row of ``columns`` cells (a wrapped line could not be
    rewritten: the carriage return goes back only to the start of its last row)."""
    room, out = max(columns - 1, 1), []
    for char in text:
        width = 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if width > room:
            break
        room -= width
        out.append(char)
    return "".join(out)
