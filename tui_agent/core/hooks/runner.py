"""The hooks of one session: which run for an event (their matchers), the JSON each gets
on stdin (Claude Code's fields: ``session_id``, ``transcript_path``, ``cwd``,
``permission_mode``, ``hook_event_name`` and the event's own), run in parallel, and their
answers combined (:mod:`tui_agent.core.hooks.answers`). The processes themselves are
:mod:`tui_agent.core.hooks.process`'s; where in the loop each event fires is the agent's
(:mod:`tui_agent.core.agent.hooked`).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.hooks.answers import HookResult, combine, read
from tui_agent.core.hooks.process import run_hook
from tui_agent.custom.hooks import MATCHED_ON, HookConfig

PERMISSION_MODES = {"default": "default", "plan": "plan", "auto": "bypassPermissions"}
"""tui-agent's modes as Claude Code names them in ``permission_mode`` (``auto`` runs all
that is not denied without asking: Claude Code's ``bypassPermissions``)."""


@dataclass
class SessionFacts:
    """What every hook's input says of the session (read at each event: a resumed or
    cleared conversation changes them)."""

    session_id: Callable[[], str]
    transcript_path: Callable[[], str]
    mode: Callable[[], str]


@dataclass
class Hooks:
    """The configured hooks and where they run: ``cwd`` (the session's folder) and the
    project folder (``CLAUDE_PROJECT_DIR``, ``TUI_AGENT_PROJECT_DIR``)."""

    config: HookConfig
    cwd: Path
    project_dir: Path
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    def wants(self, event: str, subject: str | None = None) -> bool:
        return bool(self.config.commands(event, subject))

    async def fire(self, event: str, facts: SessionFacts, fields: Mapping[str, Any],
                   subject: str | None = None) -> HookResult:
        """Run ``event``'s hooks that match ``subject`` (default: the field the event is
        matched on) with the session's facts and ``fields`` as input."""
        if subject is None and event in MATCHED_ON:
            value = fields.get(MATCHED_ON[event])
            subject = value if isinstance(value, str) else None
        commands = self.config.commands(event, subject)
        if not commands:
            return HookResult()
        payload = {"session_id": facts.session_id(),
                   "transcript_path": facts.transcript_path(), "cwd": str(self.cwd),
                   "permission_mode": PERMISSION_MODES.get(facts.mode(), facts.mode()),
                   "hook_event_name": event, **fields}
        stdin = json.dumps(payload, default=str).encode()
        env = {**self.env, "CLAUDE_PROJECT_DIR": str(self.project_dir),
               "TUI_AGENT_PROJECT_DIR": str(self.project_dir)}
        runs = await asyncio.gather(*(run_hook(
            hook.command, stdin, cwd=self.cwd, env=env, timeout=hook.timeout)
            for hook in commands))
        return combine([read(event, ran) for ran in runs])
