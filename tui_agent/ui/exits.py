"""The ways out the person did not ask for with the quit key: SIGINT, SIGTERM, SIGHUP, and
the terminal going away (a closed window, a dropped SSH session, a killed tmux).

Each one ends the app as the quit key does (the turn cancelled and recorded, the session
closed, every server, container and script child stopped), once; a second *signal*
leaves at once. A terminal that went away is noticed three ways, whichever comes first:
SIGHUP, a write to it failing (EIO), or (on Linux) a poll of it reporting a hang-up
(checked twice a second, for the case where no signal comes and nothing is drawn).

Textual writes the screen through a thread fed by a bounded queue. When the terminal is
gone its first write raises, the thread dies, the queue fills, and the next write (the
exit's own "leave the alternate screen") blocks the app forever, orphaned and spinning
on the dead terminal's endless end of input. :class:`SafeWriter` takes its place: a
failed write marks the terminal gone, and from then on writes are dropped, never queued.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from collections.abc import Callable
from typing import IO

from textual.drivers._writer_thread import WriterThread

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
POLL_EVERY = 0.5
"""Seconds between two looks at whether the terminal is still there."""
RESTORE = "\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l"
"""Leave the alternate screen, show the cursor, stop mouse reporting and bracketed paste."""
HUNG_UP = select.POLLHUP | select.POLLERR | select.POLLNVAL


class SafeWriter(WriterThread):
    """Textual's writer thread, less the hang: once a write fails the terminal is gone;
    later writes are dropped, and ``on_gone`` (from this thread) is called once."""

    on_gone: Callable[[], object] | None = None
    """Set by the app: what to do when the terminal went away."""

    def __init__(self, file: IO[str]) -> None:
        super().__init__(file)
        self.gone = False

    def write(self, text: str) -> None:
        if not self.gone:
            super().write(text)

    def run(self) -> None:
        queue, file = self._queue, self._file
        while (text := queue.get()) is not None:
            if self.gone:
                continue
            try:
                file.write(text)
                if queue.qsize() == 0:
                    file.flush()
            except (OSError, ValueError):
                self._lost()
        if not self.gone:
            with contextlib.suppress(OSError, ValueError):
                file.flush()

    def _lost(self) -> None:
        self.gone = True
        with contextlib.suppress(Exception):  # what is left buffered can never be written
            self._file.flush()
        if SafeWriter.on_gone is not None:
            SafeWriter.on_gone()


def use_safe_writer() -> None:
    """Make Textual's Linux driver write through :class:`SafeWriter` (before it starts);
    nothing where there is no such driver."""
    try:
        from textual.drivers import linux_driver
    except ImportError:  # no termios: not a POSIX terminal
        return
    setattr(linux_driver, "WriterThread", SafeWriter)  # noqa: B010 (not exported)


def terminal_gone(fd: int | None = None) -> bool:
    """Whether the terminal on ``fd`` (standard input by default) was hung up. Asked of
    Linux only: macOS's poll() does not take terminals (it answers POLLNVAL), so there
    SIGHUP and a failed write tell."""
    if not sys.platform.startswith("linux"):
        return False
    if fd is None:
        if sys.__stdin__ is None:
            return False
        try:
            fd = sys.__stdin__.fileno()
        except (OSError, ValueError):
            return True
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    try:
        return any(events & HUNG_UP for _, events in poll.poll(0))
    except OSError:
        return True


def emergency_exit(code: int) -> None:
    """Leave now: put the terminal back as well as can be done without Textual, and exit
    without running any more of the app."""
    with contextlib.suppress(OSError):
        os.write(sys.__stdout__.fileno() if sys.__stdout__ else 1, RESTORE.encode())
    with contextlib.suppress(Exception):
        import termios

        fd = sys.__stdin__.fileno() if sys.__stdin__ else 0
        attrs = termios.tcgetattr(fd)
        attrs[3] |= termios.ECHO | termios.ICANON | termios.ISIG
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
    os._exit(code)
