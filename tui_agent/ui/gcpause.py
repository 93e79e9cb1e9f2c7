"""Python's full garbage collections are held off while a reply streams, and every
collection on the way to the first frame.

Streaming Markdown makes Textual allocate fast (strips, caches, widgets: a
2,000-token reply leaves ~200,000 more live objects). The collector then runs
a full pass about once a second, and each pass walks every live object: 150 to
400 ms on our machines, the UI frozen meanwhile, keys not echoed. While a reply
streams only the young generations are collected (a few ms each); the full pass
runs once, just after the reply ends.

Start-up allocates the same way (Textual, its CSS, the widgets: about 15 ms of
collections on the way to the first frame), and what it allocates lives as long
as the app: collecting then is work for nothing. The command holds every
collection from before it imports the app until the first frame is drawn
(:func:`hold_until_first_frame`, :func:`first_frame_drawn`).
"""

from __future__ import annotations

import gc

HELD = 1 << 30
"""The oldest generation's threshold while held: never reached."""

_start_up = [False]
"""Whether the command disabled the collector for its start-up (a test's app never does)."""


def hold_until_first_frame() -> None:
    """No collection until :func:`first_frame_drawn` (the ``tui-agent`` command, before it
    imports the app)."""
    if gc.isenabled():
        gc.disable()
        _start_up[0] = True


def first_frame_drawn() -> None:
    """The collector runs again, if :func:`hold_until_first_frame` stopped it. What start-up
    made is frozen first (``gc.freeze``): it lives as long as the app, and no collection
    walks it again (else the first one after this walked all of it, ~57,000 objects and
    ~33 ms, one or two frames; the little start-up garbage it leaves is kept)."""
    if _start_up[0]:
        _start_up[0] = False
        gc.freeze()
        gc.enable()


class FullCollections:
    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

    @property
    def held(self) -> bool:
        return self._saved is not None

    def hold(self) -> None:
        if self._saved is None:
            self._saved = gc.get_threshold()
            gc.set_threshold(self._saved[0], self._saved[1], HELD)

    def release(self) -> bool:
        """Back to the thresholds before; whether they were held."""
        if self._saved is None:
            return False
        gc.set_threshold(*self._saved)
        self._saved = None
        return True
