"""Who may run which tool: the per-server policy, and the gate that asks.

Every tool call, from the model or (later) from a code-mode script, passes
:meth:`Policy.classify` and, when that says ``ask``, the :class:`Gate` the front
end supplies: the TUI's modal, or a headless flag.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Verdict = Literal["deny", "auto", "ask"]


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call waiting for a decision, with everything a person needs to judge it."""

    id: str
    name: str
    server: str
    tool: str
    arguments: dict[str, Any]
    description: str = ""
    why: str = "not auto-approved"
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    approved: bool
    reason: str | None = None

    @classmethod
    def approve(cls, reason: str | None = None) -> Decision:
        return cls(True, reason)

    @classmethod
    def deny(cls, reason: str | None = None) -> Decision:
        return cls(False, reason)


class Gate(Protocol):
    """Decides calls the policy does not settle. Supplied by the front end."""

    async def decide(self, call: PendingCall) -> Decision: ...


class ApproveAll:
    """``--approve auto``: every allowed tool runs."""

    async def decide(self, call: PendingCall) -> Decision:
        return Decision.approve("--approve auto")


class DenyAll:
    """``--approve deny``: only auto-approved tools run."""

    async def decide(self, call: PendingCall) -> Decision:
        return Decision.deny("not auto-approved, and this run denies every other tool "
                             "(--approve deny)")


@dataclass(frozen=True, slots=True)
class ServerRules:
    allow: Sequence[str] = ("*",)
    auto: Sequence[str] = ()


def _matches(tool: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(tool, p) for p in patterns)


@dataclass
class Policy:
    """``allow`` and ``auto`` glob lists per server; a server without rules allows all and asks."""

    rules: Mapping[str, ServerRules] = field(default_factory=dict)

    def classify(self, server: str, tool: str) -> Verdict:
        rules = self.rules.get(server, ServerRules())
        if not _matches(tool, rules.allow):
            return "deny"
        return "auto" if _matches(tool, rules.auto) else "ask"
