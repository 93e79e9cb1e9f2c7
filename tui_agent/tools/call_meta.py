"""What a tool call's ``_meta`` carries beside the progress token: the front end sets
:data:`CALL_META` around a call (the agent puts there which conversation the call comes
from, for the built-in server's checkpoints), and the connection sends it with the call."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

CALL_META: ContextVar[dict[str, Any] | None] = ContextVar("tui_agent_call_meta", default=None)
