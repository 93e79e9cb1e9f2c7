"""Checkpoints of the files the built-in tools change, and what ``/rewind`` restores.

Before ``edit`` or ``write`` changes a file (and, for the files it can see, before a
``shell`` command in the project), the tool calls :func:`before_write` (or
:meth:`Checkpoints.keep`): the file's content is kept as a blob named by its sha256
(:mod:`.blobs`) and one line is appended to the journal (:mod:`.journal`): its sequence
number, the time, the path and the blob, or that the file was absent, and the conversation
whose call made the change with its count of messages before it (:mod:`.caller`).
``/rewind`` picks the lines of the conversation's lineage since a message
(:func:`tui_agent.core.rewind.plan`) and :meth:`Checkpoints.put_back` puts each file back as
it was then, only inside the conversation's folders and never through a symbolic link
(:mod:`.putting`); what it could not put back is listed with why. A ``shell`` command's
changes are found by a look at the project before and after it (:mod:`.shell_watch`), and
journaled the same way.

One store per working folder the server ran in, under the data directory
(:func:`store_for`), shared by every conversation run there (the tags tell them apart);
each conversation's stores are noted by its id, so a resumed one finds them. The store is bounded
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
    not_written,
    store_for,
)

__all__ = ["MOST_BYTES", "MOST_ENTRIES", "MOST_FILE", "Checkpoints", "Restored",
           "before_write", "not_written", "store_for"]
