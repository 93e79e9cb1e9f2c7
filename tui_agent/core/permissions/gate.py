"""The gate's side of a call: what a person (or a headless flag) is asked
(:class:`PendingCall`), what they answer (:class:`Decision`), and the :class:`Gate`
protocol each front end supplies: the TUI's modal, ACP's permission request, or a flag.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tui_agent.core.diffs import FileChange, Scopes, change_of
from tui_agent.tools.text import clean

SCRIPT_REASON = "approved with the script (a tool it lists)"


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
    """For a call made by a code-mode script: the script's own call id."""
    agent: str | None = None
    """For a call a sub-agent makes: who asks (the agent's name and id, ``explore
    (call_1)``), for the question to say."""
    agent_id: str | None = None
    """For a call a sub-agent makes: the id of the ``agent`` call that started it (the
    innermost one), which front ends that show a sub-agent's calls apart use with ``id``
    (a sub-agent's call ids are its model's, and may repeat the parent's)."""
    fingerprint: str = ""
    script: str = ""
    """For a call made by a code-mode script: the script's source, to show beside it."""
    hints: tuple[str, ...] = ()
    """What the server says of the tool (``read-only``, ``destructive``, ...): shown,
    never trusted."""
    script_tools: tuple[str, ...] = ()
    """For a call made by a code-mode script: the tools (``server.tool``, this one first
    when it is one) that approving the script approves for the rest of its run; any other
    it reaches asks again."""
    script_held: tuple[tuple[str, str], ...] = ()
    """For a call made by a code-mode script: the tools it names that approving the
    script does not approve ahead, each with why (it writes files, or may be
    destructive): every call of them still asks."""
    change: FileChange | None = None
    """The file the call would write, as a diff against the file as it is (computed here
    from the arguments)."""
    rule_helps: bool = False
    """Whether an allow rule for the call would stop it asking (it only lacked an
    allowance: :attr:`~tui_agent.core.permissions.policy.Judgement.lacks_allowance`).
    Only then does the question offer to write one ("always allow with these
    arguments")."""

    @property
    def script_approvable(self) -> bool:
        """A script's call that approving the script would approve more with: it names
        tools that can be approved ahead. Only then is that answer offered (without them
        it would approve this call once, as ``y`` does)."""
        return bool(self.parent and self.script_tools)

    def script_scope(self, key: str = "s") -> list[str]:
        """What approving the script (``key``) does, in words for the question: the tools
        it approves for the rest of the run, and those it leaves asking, grouped by why.
        When it names none that can be approved ahead, the answer is not offered: each of
        its calls asks."""
        if self.script_tools:
            first = (f"{key} approves this call and, for the rest of this run, the script's "
                     f"calls of: {', '.join(map(clean, self.script_tools))} (any other "
                     "tool it reaches asks again)")
        else:
            first = ("each call of this script asks: none of the tools it names can be "
                     "approved ahead")
        reasons: dict[str, list[str]] = {}
        for name, why in self.script_held:
            reasons.setdefault(why, []).append(clean(name))
        held = "; ".join(f"{', '.join(names)} ({why})" for why, names in reasons.items())
        return [first, f"still asks at each call: {held}"] if held else [first]


async def with_change(pending: PendingCall, scopes: Scopes | None) -> PendingCall:
    """``pending`` with the change it would make to a file, if its tool writes one (read
    in a thread: the file may be large)."""
    scope = scopes(pending.server) if scopes is not None else None
    if scope is None:
        return pending
    try:
        change = await asyncio.to_thread(change_of, pending.tool, pending.arguments, scope)
    except Exception:  # a diff is a courtesy: without one, the arguments are still shown
        return pending
    return pending if change is None else replace(pending, change=change)


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer for one call. ``always`` (with ``approved``) trusts the tool's current
    definition from now on; ``script`` (with ``approved``) approves this call and every
    later call of the same script run to one of the tools the question listed
    (:attr:`PendingCall.script_tools`)."""

    approved: bool
    reason: str | None = None
    always: bool = False
    script: bool = False
    by: str = ""
    """Who answered, when it was not the person at the gate (a flag, an editor's
    client): empty means "you"."""
    rule: str = ""
    """With ``approved``: an allow rule to write and apply from now on ("always allow
    with these arguments", :func:`~tui_agent.core.permissions.rules.rule_for`)."""

    @classmethod
    def approve(cls, reason: str | None = None, *, always: bool = False,
                script: bool = False, by: str = "") -> Decision:
        return cls(True, reason, always, script, by)

    @classmethod
    def whole_script(cls) -> Decision:
        """Approve this call and every later call of the same script run to a tool the
        question listed."""
        return cls(True, SCRIPT_REASON, script=True)

    @classmethod
    def deny(cls, reason: str | None = None, *, by: str = "") -> Decision:
        return cls(False, reason, by=by)


class Gate(Protocol):
    """Decides calls the policy does not settle. Supplied by the front end."""

    @property
    def asks_person(self) -> bool:
        """Whether :meth:`decide` puts the question to a person waiting at this terminal
        (the app's modal, ``run --approve ask``): only then do the ``Notification`` hooks
        of a ``permission_prompt`` fire. Not a flag's answer (``--approve auto|deny``),
        nor an editor's (ACP: the editor shows and notifies its own prompt)."""
        ...

    async def decide(self, call: PendingCall) -> Decision: ...


class ApproveAll:
    """``--approve auto``: every allowed tool runs."""

    asks_person = False

    async def decide(self, call: PendingCall) -> Decision:
        return Decision.approve("--approve auto", by="--approve auto")


class DenyAll:
    """``--approve deny``: only auto-approved tools run."""

    asks_person = False

    async def decide(self, call: PendingCall) -> Decision:
        return Decision.deny(f"{call.why}, and this run denies every tool that would ask "
                             "(--approve deny)", by="--approve deny")


