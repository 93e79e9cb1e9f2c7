"""Ctrl-C before a command has set up its own handling: always "interrupted", exit 130.

A SIGINT lands wherever the interpreter is, and while modules load that can be inside an
extension's initialisation, which does not let the ``KeyboardInterrupt`` through as it
is: Python 3.11 wraps what a class's ``__set_name__`` raises in a ``RuntimeError``, and
pydantic-core's (pyo3's) import of the ``datetime`` C API turns it into an ``ImportError``
and then a ``PanicException``. So the handler notes that the signal came, and whatever
ends the command after it is an interrupt."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Watch:
    """Whether a SIGINT came while :func:`watching` held its handler."""

    seen = False

    def handler(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
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
    try:
        yield watch
    finally:
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
