"""A ``PreToolUse`` answer met with the policy's judgement of the same call, as Claude
Code meets them: a hook's deny refuses, its ask asks, its allow runs what would only ask for
want of an allowance (never what a deny denies or what asks outright)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tui_agent.core.hooks.answers import HookResult
from tui_agent.core.permissions import Judgement


@dataclass(frozen=True)
class PreTool:
    """What the ``PreToolUse`` hooks made of one call."""

    arguments: dict[str, Any]
    result: HookResult = HookResult()

    def judged(self, judged: Judgement) -> Judgement:
        """The policy's judgement with the hooks' answer over it."""
        decision, reason, by = self.result.decision, self.result.reason, self.result.by
        if decision == "deny":
            return Judgement("deny", reason or "blocked by a PreToolUse hook", by=by)
        if judged.verdict == "deny":
            return judged
        if decision == "ask":
            return dataclasses.replace(judged, verdict="ask", why=reason or judged.why, by=by)
        if decision == "allow" and judged.verdict == "ask" and not judged.by \
                and not judged.firm:
            return dataclasses.replace(judged, verdict="auto", why=reason, by=by)
        return judged
