"""Checkpoints of the files the built-in tools change, and what ``/rewind`` restores.

Before ``edit`` or ``write`` changes a file (and, for the files it can see, before a
``shell`` command in the project), the tool calls :func:`before_write` (or
:meth:`Checkpoints.keep`): the file's content is kept as a blob named by its sha256
(:mod:`.blobs`) and one line is appended to the journal (:mod:`.journal`): its sequence
number, the time, the path and the blob, or that the file was absent. ``/rewind`` asks
for the journal's position when a user message was sent (:meth:`Checkpoints.position_at`)
and :meth:`Checkpoints.restore` puts back every file changed since, as it was then; what
it could not put back is listed with why. A ``shell`` command's changes are found by a
look at the project before and after it (:mod:`.shell_watch`), and journaled the same way.

One store per working folder the server ran in, under the data directory
(:func:`store_for`): the server is one process for the app's whole run while
conversations change (``/new``, ``/resume``), and a session records the folder it was
started in and when each message was sent, so a resumed conversation finds its store
and its branch point with nothing new written in the session. The store is bounded
(:data:`~.store.MOST_BYTES` of blobs, :data:`~.store.MOST_ENTRIES` lines, files over
:data:`~.store.MOST_FILE` noted but not kept), oldest dropped first.
"""

from tui_agent.builtin.checkpoints.store import (
    MOST_BYTES,
    MOST_ENTRIES,
    MOST_FILE,
    Checkpoints,
    Restored,
    before_write,
    store_for,
)

__all__ = ["MOST_BYTES", "MOST_ENTRIES", "MOST_FILE", "Checkpoints", "Restored",
           "before_write", "store_for"]
