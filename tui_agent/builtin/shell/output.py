"""What a command printed, made fit for the model and the terminal: terminal escapes and
control characters removed, and the whole capped to its first and last parts with a
marker saying how much was cut (the end of a build log matters as much as its start).

:class:`Capture` collects a stream as it comes, keeping only the head and a rolling tail,
so a command that prints gigabytes costs the server no more than ``limit`` bytes."""

from __future__ import annotations

import re

from tui_agent.config.printable import clean


def sanitise(text: str) -> str:
    """``text`` through the one sanitiser (:func:`~tui_agent.config.printable.clean`:
    escapes, controls and format characters go; tabs and newlines stay), a carriage return
    first ending a line as a terminal shows it (a progress bar's last state)."""
    text = text.replace("\r\n", "\n")
    text = re.sub(r"[^\n]*\r(?=[^\n])", "", text)  # "50%\r100%" shows what a terminal shows
    return clean(text.replace("\r", ""))


class Capture:
    """Bytes of one stream, at most ``limit`` of them kept: the first half, and the last
    half as it rolls; ``dropped`` counts what fell between."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.read_upto = 0
        """How many bytes of the stream :meth:`take_new` has handed out (background jobs)."""
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        extra = len(self.tail) - (self.limit - self.limit // 2)
        if extra > 0:
            del self.tail[:extra]
            self.dropped += extra

    def text(self) -> str:
        """Everything kept, sanitised, with the marker where bytes were dropped."""
        return join(self.head, self.tail, self.dropped)

    def take_new(self) -> str:
        """What arrived since the last call (as much of it as was kept)."""
        start, self.read_upto = self.read_upto, self.total
        head_end = len(self.head)
        tail_start = self.total - len(self.tail)
        head = self.head[start:] if start < head_end else b""
        skip = max(0, start - tail_start)
        dropped = max(0, tail_start - max(start, head_end))
        return join(head, self.tail[skip:], dropped)


def join(head: bytes | bytearray, tail: bytes | bytearray, dropped: int) -> str:
    first = sanitise(bytes(head).decode("utf-8", "replace"))
    last = sanitise(bytes(tail).decode("utf-8", "replace"))
    if not dropped:
        return first + last
    return (f"{first}\n[... {dropped:,} bytes of output cut here; the first and last "
            f"parts are shown ...]\n{last}")
