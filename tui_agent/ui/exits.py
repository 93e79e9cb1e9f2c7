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

Textual's input thread has the opposite trouble: a hung-up terminal is always "ready"
with nothing to read, so the thread spins a core until the app has ended (seconds, while
servers close), and the SIGCONT a killed tmux sends with its SIGHUP started a second
pair of terminal threads spinning beside it. :class:`HangUpSelector` makes the input
thread wait instead (and tell the app, the fourth way of noticing), and a SIGCONT
resumes the app only after a suspend, on a terminal that is still there. A hang-up also
hurries the servers' close (:mod:`tui_agent.tools.transports.stopping`): the person is
gone, and the app has 2 s to end.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import IO, Any

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
        self._lock = threading.Lock()
        self._unwritten = 0
        """Texts queued and not yet written (and, once none is left, flushed)."""
        self._waiting: list[Callable[[], object]] = []

    def write(self, text: str) -> None:
        if not self.gone:
            with self._lock:
                self._unwritten += 1
            super().write(text)

    def when_written(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once everything queued so far is on the terminal: at once if
        nothing is queued (or the terminal is gone), else from this thread after the
        flush. The app starts its slow loading only then: threads that hold the GIL
        (pydantic's import, then litellm's) made the first frame's own writes wait for
        it, 5 ms at a time, and in tmux, whose reads come in smaller bites than a bare
        terminal's, that was tens of milliseconds."""
        with self._lock:
            now = self._unwritten == 0 or self.gone
            if not now:
                self._waiting.append(callback)
        if now:
            callback()

    def run(self) -> None:
        queue, file = self._queue, self._file
        while (text := queue.get()) is not None:
            if not self.gone:
                try:
                    file.write(text)
                    if queue.qsize() == 0:
                        file.flush()
                except (OSError, ValueError):
                    self._lost()
            self._written()
        if not self.gone:
            with contextlib.suppress(OSError, ValueError):
                file.flush()
        self._written(everything=True)

    def _written(self, everything: bool = False) -> None:
        """One text is written (or dropped); the callbacks waiting for an empty queue are
        called once it is (``everything``: the thread is ending, nobody waits longer)."""
        with self._lock:
            self._unwritten = 0 if everything else self._unwritten - 1
            waiting: list[Callable[[], object]] = []
            if self._unwritten == 0:
                waiting, self._waiting = self._waiting, []
        for callback in waiting:
            callback()

    def _lost(self) -> None:
        self.gone = True
        with contextlib.suppress(Exception):  # what is left buffered can never be written
            self._file.flush()
        if SafeWriter.on_gone is not None:
            SafeWriter.on_gone()


class HangUpSelector(selectors.SelectSelector):
    """What Textual's input thread waits on for keys. Once the terminal is hung up it
    tells the app (through ``SafeWriter.on_gone``, once), then waits out each timeout and
    reports nothing, instead of reporting the endless end of input at once."""

    def __init__(self) -> None:
        super().__init__()
        self.gone = False

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if not self.gone:
            ready = super().select(timeout)
            if not ready or not terminal_gone(ready[0][0].fd):
                return ready
            self.gone = True
            if SafeWriter.on_gone is not None:
                with contextlib.suppress(RuntimeError):  # the app's loop has closed already
                    SafeWriter.on_gone()
        time.sleep(POLL_EVERY if timeout is None else timeout)
        return []


def harden_driver() -> None:
    """Make Textual's Linux driver (before it starts) write through :class:`SafeWriter`,
    wait for keys on a :class:`HangUpSelector`, and resume on SIGCONT only after a
    suspend and on a terminal still there; nothing where there is no such driver."""
    try:
        from textual.drivers import linux_driver
    except ImportError:  # no termios: not a POSIX terminal
        return
    # None of these is exported: the module's own names are replaced. Its ``selectors``
    # becomes the whole module less one class, so whatever else of it Textual reads
    # (EVENT_READ, SelectorKey, ...) is still there. These patches stay here, beside
    # what they install, rather than with the timer's in ``textual_fixes``: they are
    # the hang-up's, not fixes of a Textual bug that a release may remove.
    setattr(linux_driver, "WriterThread", SafeWriter)  # noqa: B010
    setattr(linux_driver, "selectors", SimpleNamespace(  # noqa: B010
        **{**vars(selectors), "SelectSelector": HangUpSelector}))
    driver: Any = linux_driver.LinuxDriver
    resume = driver.__dict__.get("_sigcont_application")
    if resume is None or getattr(resume, "hardened", False):
        return

    def resume_after_suspend(self: Any, *args: Any) -> None:
        # Only a SIGTSTP of the app's own sets the flag; a stray SIGCONT (`kill -CONT`,
        # or the one a killed tmux sends) would start a second set of terminal threads.
        if getattr(self, "_must_signal_resume", True) and not terminal_gone():
            resume(self, *args)

    resume_after_suspend.hardened = True  # type: ignore[attr-defined]
    driver._sigcont_application = resume_after_suspend


def hung_up(signum: int) -> bool:
    """Whether ``signum`` says the terminal hung up; if so, the servers' close is
    hurried from now on (nobody waits for it, and the app has 2 s to end)."""
    if signum != signal.SIGHUP:
        return False
    from tui_agent.tools.transports import stopping  # (loaded with the servers, if any)

    stopping.hurry()
    return True


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
