"""Python's full garbage collections are held off while a reply streams.

Streaming Markdown makes Textual allocate fast (strips, caches, widgets: a
2,000-token reply leaves ~200,000 more live objects). The collector then runs
a full pass about once a second, and each pass walks every live object: 150 to
400 ms on our machines, the UI frozen meanwhile, keys not echoed. While a reply
streams only the young generations are collected (a few ms each); the full pass
runs once, just after the reply ends.
"""

from __future__ import annotations

import gc

HELD = 1 << 30
"""The oldest generation's threshold while held: never reached."""


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
