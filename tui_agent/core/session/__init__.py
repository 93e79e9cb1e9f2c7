"""Conversations on disk: one append-only JSONL file each.

Records (one JSON object a line, ``kind`` first):

* ``meta``: written once when the file is created (id, creation time, model; ``demo``
  for a conversation with the offline demo's scripted model);
* ``message``: a finished message in OpenAI format, fsynced when written; a tool
  result's carries ``call``: how its call ended as its card showed it (approval, failed,
  denied or cancelled, duration, a script's own calls; an ``agent`` call's sub-agent,
  whose transcript is a session file of its own in ``<stem>.agents/``; :mod:`.calls`);
* ``partial``: a piece of an assistant reply still streaming (flushed, not
  fsynced), superseded by the ``message`` with the same ``seq``;
* ``turn``: the end of a turn, with its usage and why it stopped;
* ``compaction``: what the model reads from then on instead of the first ``replaces``
  messages (their ``summary``), and which tool results it reads as a stub. The messages
  themselves stay in the file; the last compaction is where a resumed session goes on.

A crash loses at most the reply in flight, and even that is recovered from its
partial records, marked incomplete. The file is never rewritten. A last line that lacks
its newline is read by one rule (:func:`~.records.record_of`): a whole record is loaded, and
the writer ends its line before appending; anything else is torn, skipped on load and cut
before the next record is appended (so it cannot take that record down with it). Files
are private to the user (0600, their directories 0700). Known secret values are masked
before anything is written, and again when a file is read.

The parts: :mod:`.records` (what a file holds, as loaded), :mod:`.calls` (how a call
ended), :mod:`.writer`, :mod:`.loader`,
:mod:`.store` (the directory of files).
"""

from tui_agent.core.session.calls import CallLog, SavedAgent, SavedCall
from tui_agent.core.session.loader import agent_transcript, known_secrets, load
from tui_agent.core.session.records import (
    FORMAT_VERSION,
    Compaction,
    Conversation,
    Entry,
    Marker,
    SessionError,
    new_id,
)
from tui_agent.core.session.store import SessionStore, is_demo
from tui_agent.core.session.writer import PARTIAL_FLUSH_SECONDS, SessionWriter

__all__ = ["FORMAT_VERSION", "PARTIAL_FLUSH_SECONDS", "CallLog", "Compaction", "Conversation",
           "Entry", "Marker", "SavedAgent", "SavedCall", "SessionError", "SessionStore",
           "SessionWriter", "agent_transcript", "is_demo", "known_secrets", "load", "new_id"]
