"""Memory that big tool results took goes back to the system when they are freed.

glibc's malloc serves a block over its mmap threshold (128 KB at start) with a mapping of
its own, returned to the system on free; but each such free raises the threshold to the
size of the block (up to 32 MB). After the first result of 7 MB, every later one (its
text, its JSON, its pieces) comes from the heap, where freed memory mostly stays with the
process: nine 7 MB results left it about 30 MB bigger and raised its peak by as much.
Fixing the threshold (``mallopt(M_MMAP_THRESHOLD)``, which also turns the raising off)
keeps every big block a mapping of its own. Linux with glibc only; elsewhere nothing is
done (musl's ``mallopt`` does nothing either).
"""

from __future__ import annotations

import sys

M_MMAP_THRESHOLD = -3
BIG_BLOCK = 256 * 1024
"""Blocks this big or bigger get a mapping of their own (glibc's default starts at half)."""
_done = False


def give_back_big_blocks() -> None:
    """Set the threshold, once per process (the first server started does it)."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return
    _done = True
    import ctypes

    try:
        mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    except OSError:
        return
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, BIG_BLOCK)
