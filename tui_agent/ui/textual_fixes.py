"""A fix for Textual's repeating timer, applied while Textual still has the bug.

A repeating timer that falls behind (a frame that took longer than the interval,
or a pause: the screen pauses its update timer whenever nothing is dirty) skips
to a later tick. Textual 8 skips one too many: the next tick comes one to two
intervals later instead of at the next one. The screen's update timer runs at
60 ticks a second and is paused between frames, so after every pause the next
frame waited 17 to 33 ms, not 0 to 17: the end of a streamed reply reached the
screen two frames late, and a stream drew at about 40 frames a second, not 60.

:func:`apply` replaces ``Timer._run`` with the same loop less the extra tick, and
only if Textual's own loop still reads as it does in the versions this was
written against; once Textual changes it, nothing is replaced.
"""

from __future__ import annotations

from pathlib import Path

from textual import _time, timer
from textual.timer import EventTargetGone, Timer

BUGGY = "count = int((now - start) / _interval + 1)"
"""The line of ``Timer._run`` that skips one tick too many."""


async def _run(self: Timer) -> None:
    """Textual's ``Timer._run`` (8.2), but a late timer skips to the next tick."""
    count = 0
    repeat = self._repeat
    interval = self._interval
    await self._active.wait()
    start = _time.get_time()
    while repeat is None or count <= repeat:
        next_timer = start + ((count + 1) * interval)
        now = _time.get_time()
        if self._skip and next_timer < now:
            count = int((now - start) / interval)  # the next tick: Textual adds one
            continue
        await _time.sleep(max(0, next_timer - _time.get_time()))
        count += 1
        await self._active.wait()
        if self._reset:
            start = _time.get_time()
            count = 0
            self._reset = False
            continue
        try:
            await self._tick(next_timer=next_timer, count=count)
        except EventTargetGone:
            break


def needed() -> bool:
    """Whether Textual's timer loop is still the one with the extra tick (read from its
    module's source, which costs 0.1 ms where ``inspect.getsource`` costs 5 on the way
    to the first frame)."""
    try:
        return BUGGY in Path(timer.__file__).read_text(encoding="utf-8")
    except (OSError, TypeError, UnicodeDecodeError):  # no source to read: leave it be
        return False


def apply() -> bool:
    """Put the fixed loop in place if Textual needs it; whether it did (or had)."""
    if Timer._run is _run:
        return True
    if not needed():
        return False
    Timer._run = _run  # type: ignore[method-assign]
    return True
