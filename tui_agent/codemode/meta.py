"""The names of the four meta-tools and of their pseudo-server. Apart from the rest of
code mode so the chat app can name them without importing the config models."""

from __future__ import annotations

META_SERVER = "code mode"
"""The pseudo-server of the meta-tools (they need no approval: they only read stubs,
and every call a script makes is asked about on its own)."""
LIST, READ, DOCS, EXECUTE = "listToolFiles", "readToolFile", "getToolDocs", "executeToolCode"
META = (LIST, READ, DOCS, EXECUTE)
