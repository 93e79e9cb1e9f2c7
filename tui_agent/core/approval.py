"""Who may run which tool: the per-server policy, and the gate that asks.

Every tool call, from the model or (later) from a code-mode script, passes
:meth:`Policy.judge` and, when that says ``ask``, the :class:`Gate` the front
end supplies: the TUI's modal, or a headless flag.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from tui_agent.core.diffs import FileChange, Scopes, change_of
from tui_agent.core.filters import ToolFilter
from tui_agent.tools.text import clean

Verdict = Literal["deny", "auto", "ask"]
SCRIPT_REASON = "approved with the script (a tool it lists)"
Standing = Literal["auto", "ask", "not allowed"]
Persist = Callable[[str, str, str, bool], None]
"""``(server, list name, tool, add)``: write a rule change to where the server was configured;
raises (``ConfigError``, naming the file) when it cannot."""


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

    @classmethod
    def approve(cls, reason: str | None = None, *, always: bool = False,
                script: bool = False) -> Decision:
        return cls(True, reason, always, script)

    @classmethod
    def whole_script(cls) -> Decision:
        """Approve this call and every later call of the same script run to a tool the
        question listed."""
        return cls(True, SCRIPT_REASON, script=True)

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
        return Decision.deny(f"{call.why}, and this run denies every tool that would ask "
                             "(--approve deny)")


@dataclass(frozen=True, slots=True)
class ServerRules:
    """One server's glob lists. ``deny`` beats ``ask`` beats ``auto``; ``allow`` bounds them all."""

    allow: Sequence[str] = ("*",)
    auto: Sequence[str] = ()
    ask: Sequence[str] = ()
    deny: Sequence[str] = ()


def _matches(tool: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(tool, p) for p in patterns)


class ApprovalStore:
    """The tools a person chose to always allow, and the definition each trust was given to.

    Kept per ``(server, tool)`` as ``{"always": bool, "fingerprint": str}`` in a JSON file
    (or only in memory when ``path`` is None). Auto-approved tools from the config are
    pinned here the first time they are seen (trust on first use)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._data: dict[str, dict[str, dict[str, Any]]] = {}
        self.problem: str | None = None
        if path is not None:
            self._read(path)

    def _read(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            # Fail safe: an unreadable store means nothing is pinned, so changed tools
            # cannot slip through as trusted; auto tools are simply pinned afresh.
            self.problem = f"{path}: ignored, cannot read it ({exc})"
            return
        if isinstance(data, dict):
            self._data = {str(k): v for k, v in data.items() if isinstance(v, dict)}

    def entry(self, server: str, tool: str) -> dict[str, Any]:
        found = self._data.get(server, {}).get(tool)
        return found if isinstance(found, dict) else {}

    def set(self, server: str, tool: str, fp: str, *, always: bool | None = None) -> None:
        entry = dict(self.entry(server, tool))
        entry["fingerprint"] = fp
        if always is not None:
            entry["always"] = always
        self._data.setdefault(server, {})[tool] = entry
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    why: str = ""
    trust: tuple[str, str] | None = None
    """For a built-in tool that judges its own calls (``skill``): the ``(key, digest)`` an
    "always allow" answer trusts (a skill as it is now), kept in the
    :class:`ApprovalStore` under the built-in server. None: the tool's definition is what
    "always allow" trusts."""
    firm: bool = False
    """An ``ask`` nothing may turn into ``auto``: the server itself asks for every call
    (:attr:`~tui_agent.tools.spec.ToolSpec.asks`). No approved script or skill covers
    it, and "always allow" is not offered."""


@dataclass
class Policy:
    """The one rule set every call passes. A server without rules allows all and asks.

    ``persist``, when given, writes the rule changes a person makes (always allow, the
    servers screen's toggles) back to the config file the server came from."""

    rules: dict[str, ServerRules] = field(default_factory=dict)
    store: ApprovalStore = field(default_factory=ApprovalStore)
    persist: Persist | None = None
    filter: ToolFilter = field(default_factory=ToolFilter)
    """This run's or conversation's narrowing (``--tools``, ``/tools``): it never widens
    what the rules allow."""

    def allowed(self, server: str, tool: str) -> bool:
        """Whether the config's rules let the model see the tool (filters aside)."""
        rules = self.rules.get(server, ServerRules())
        return _matches(tool, rules.allow) and not _matches(tool, rules.deny)

    def offered(self, server: str, tool: str) -> bool:
        """Whether the model may see the tool at all: the rules allow it and the filter
        lets it through."""
        return self.allowed(server, tool) and self.filter.allows(server, tool)

    def judge(self, server: str, tool: str, fp: str = "", *, asks: str = "") -> Judgement:
        """What to do with a call of ``tool`` whose current definition has digest ``fp``
        (empty for tools without one, such as local functions). ``asks``: the server's
        own reason to ask before every call of it (the spec's ``asks``), which no list,
        "always allow" or pinned definition overrides; the deny rules still come first."""
        if not self.allowed(server, tool):
            return Judgement("deny", f"{tool} is not in the allow list of {server}")
        if not self.filter.allows(server, tool):
            return Judgement("deny", self.filter.why_not(server, tool))
        if asks:
            return Judgement("ask", asks, firm=True)
        if self.standing(server, tool) == "ask":
            rules = self.rules.get(server, ServerRules())
            why = "always asks (the server's ask list)" if _matches(tool, rules.ask) \
                else "not auto-approved"
            return Judgement("ask", why)
        pinned = self.store.entry(server, tool).get("fingerprint")
        if fp and pinned and pinned != fp:
            return Judgement("ask", "its definition (description or parameters) changed "
                                    "since it was allowed")
        if fp and not pinned:
            self.store.set(server, tool, fp)
        return Judgement("auto")

    def standing(self, server: str, tool: str) -> Standing:
        """How the config treats a call of the tool, leaving aside a changed definition
        and this run's filter."""
        if not self.allowed(server, tool):
            return "not allowed"
        rules = self.rules.get(server, ServerRules())
        if _matches(tool, rules.ask):
            return "ask"
        if _matches(tool, rules.auto) or self.store.entry(server, tool).get("always"):
            return "auto"
        return "ask"

    def always_allow(self, server: str, tool: str, fp: str) -> str | None:
        """Trust this definition of the tool from now on (the user's "always allow").
        Returns a problem to show when the choice could not be written to the config."""
        return self.set_standing(server, tool, "auto", fp)

    def set_standing(self, server: str, tool: str, standing: Standing,
                     fp: str = "") -> str | None:
        """Make the tool ``auto``, ``ask`` or ``not allowed``: now, and in the config file.

        Only names the person chose are added or removed; when a glob pattern still
        decides otherwise, a more specific list entry wins over it (``ask`` over ``auto``,
        ``deny`` over ``allow``). Returns a problem to show, or None."""
        problems: list[str] = []
        if standing == "not allowed":
            self._edit(server, "deny", tool, True, problems)
            return "; ".join(problems) or None
        self._edit(server, "deny", tool, False, problems)
        rules = self.rules.get(server, ServerRules())
        if _matches(tool, rules.deny):
            return f"{tool} is denied by a pattern in {server}'s deny list; edit it there"
        if not _matches(tool, rules.allow):
            self._edit(server, "allow", tool, True, problems)
        if standing == "auto":
            self._edit(server, "ask", tool, False, problems)
            if _matches(tool, self.rules.get(server, ServerRules()).ask):
                return f"{tool} matches a pattern in {server}'s ask list; edit it there"
            self._edit(server, "auto", tool, True, problems)
            self.store.set(server, tool, fp or self.store.entry(server, tool).get(
                "fingerprint", ""), always=True)
        else:
            self._edit(server, "auto", tool, False, problems)
            self.store.set(server, tool, self.store.entry(server, tool).get("fingerprint", ""),
                           always=False)
            if _matches(tool, self.rules.get(server, ServerRules()).auto):
                self._edit(server, "ask", tool, True, problems)
        return "; ".join(problems) or None

    def _edit(self, server: str, name: str, tool: str, add: bool, problems: list[str]) -> None:
        rules = self.rules.get(server, ServerRules())
        current = tuple(getattr(rules, name))
        if add == (tool in current):
            return
        updated = (*current, tool) if add else tuple(p for p in current if p != tool)
        self.rules[server] = replace(rules, **{name: updated})
        if self.persist is None:
            return
        try:
            self.persist(server, name, tool, add)
        except Exception as exc:  # a file that cannot be written must not undo the choice
            problems.append(f"applied for this session only: {exc}")
