"""Ctrl-C before a command has set up its own handling: always "interrupted", exit 130.

A SIGINT lands wherever the interpreter is, and while modules load that can be inside an
extension's initialisation, which does not let the ``KeyboardInterrupt`` through as it
is: Python 3.11 wraps what a class's ``__set_name__`` raises in a ``RuntimeError``, and
pydantic-core's (pyo3's) import of the ``datetime`` C API turns it into an ``ImportError``
and then a ``PanicException``. So the handler notes that the signal came, and whatever
ends the command after it is an interrupt.

A SIGINT can also land where Python swallows every exception: a weakref callback (the
import system's module-lock ones run at any moment of an import), a ``__del__``, a
garbage-collector callback. There the ``KeyboardInterrupt`` would be printed as
"Exception ignored in ..." and lost, and the command would go on as if nobody had pressed
Ctrl-C. While the handler is ours, such a swallowed interrupt is not printed but sent
again, from a helper thread, so that it lands once that callback is over; a command that
ends before it lands is an interrupted one (:attr:`Watch.dropped`)."""

from __future__ import annotations

import _thread
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Watch:
    """Whether a SIGINT came while :func:`watching` held its handler."""

    seen = False
    dropped = False
    """A ``KeyboardInterrupt`` that Python swallowed has not been raised again yet (its
    SIGINT is on its way again, or the command ended first: then it is an interrupted
    command all the same)."""

    def handler(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        self.dropped = False
        raise KeyboardInterrupt


@contextmanager
def watching() -> Iterator[Watch]:
    """SIGINT raises ``KeyboardInterrupt`` as Python's default handler does, and is noted;
    the handler in place before comes back after (for a caller inside another program,
    such as the tests). Only Python's default handler is replaced: a command that
    installs its own keeps it."""
    watch = Watch()
    before = signal.getsignal(signal.SIGINT)
    if before is not signal.default_int_handler:
        yield watch
        return
    signal.signal(signal.SIGINT, watch.handler)
    hook_before = sys.unraisablehook
    watching_now = [True]
    lock = _thread.allocate_lock()
    main_thread = _thread.get_ident()

    def send_again() -> None:
        with lock:  # never once the watch is over: the signal would be someone else's
            if watching_now[0]:
                # To the main thread itself: sent to the process, the signal may be taken
                # by another thread (this one), and a main thread blocked in a wait (a
                # sleep, a lock) would not see it until the wait ends.
                signal.pthread_kill(main_thread, signal.SIGINT)

    def swallowed(unraisable: sys.UnraisableHookArgs) -> None:
        if not issubclass(unraisable.exc_type, KeyboardInterrupt) or \
                signal.getsignal(signal.SIGINT) != watch.handler:
            hook_before(unraisable)  # not our handler's interrupt: as Python would
            return
        # Not raised again here (it would be swallowed with the rest) but delivered again
        # once this callback is over. A thread from _thread: nothing is imported, and this
        # may be inside an import.
        watch.dropped = True
        _thread.start_new_thread(send_again, ())

    sys.unraisablehook = swallowed
    try:
        yield watch
    finally:
        with lock:
            watching_now[0] = False
        if sys.unraisablehook is swallowed:
            sys.unraisablehook = hook_before
        if signal.getsignal(signal.SIGINT) == watch.handler:
            signal.signal(signal.SIGINT, before)


def was_interrupt(exc: BaseException, watch: Watch) -> bool:
    """``exc`` is a Ctrl-C, or what one became on its way out (see the module's text)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return watch.seen
