"""Who may run which tool: the per-server lists and the standing a person gave a tool.

Every tool call, from the model or from a code-mode script, passes :meth:`Policy.judge`
and, when that says ``ask``, the :class:`~tui_agent.core.permissions.gate.Gate` the front
end supplies.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tui_agent.config.rule_text import KINDS, RuleEntry, RuleSyntaxError
from tui_agent.core.filters import ToolFilter
from tui_agent.core.permissions.modes import PLAN_REFUSAL, Mode
from tui_agent.core.permissions.rules import RuleFiles, RuleSet, names_match
from tui_agent.core.permissions.store import ApprovalStore

Verdict = Literal["deny", "auto", "ask"]
Standing = Literal["auto", "ask", "not allowed"]
Persist = Callable[[str, str, str, bool], None]
"""``(server, list name, tool, add)``: write a rule change to where the server was configured;
raises (``ConfigError``, naming the file) when it cannot."""


@dataclass(frozen=True, slots=True)
class ServerRules:
    """One server's glob lists. ``deny`` beats ``ask`` beats ``auto``; ``allow`` bounds them all."""

    allow: Sequence[str] = ("*",)
    auto: Sequence[str] = ()
    ask: Sequence[str] = ()
    deny: Sequence[str] = ()


def _matches(tool: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(tool, p) for p in patterns)


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
    by: str = ""
    """What decided it, in words a person reads in the question, the JSONL ``approval``
    event's ``by``, the session file and ``/permissions``: a rule with its file, a
    server's list, a mode, "always allow". For an ``ask``: empty when nothing but the
    lack of an allowance asks (a hook's ``allow`` may then let the call run); set when
    something asks outright (an ask rule or list, a changed definition), which a hook's
    ``allow`` does not override."""

    @property
    def lacks_allowance(self) -> bool:
        """An ``ask`` only for want of an allowance: an allow rule would let such a call
        run. Not so when something asks outright (``by``: an ask rule or list, a hook's
        ask, a changed definition; ``firm``: the server asks every time) or a built-in
        tool judges its own calls (``trust``): a rule written then would change nothing,
        or skip what the question is there for."""
        return self.verdict == "ask" and not self.firm and not self.by and self.trust is None


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
    mode: Mode = "default"
    """The permission mode (:mod:`~tui_agent.core.permissions.modes`): the front ends
    switch it; every later call is judged by it."""
    read_only: Sequence[str] = ()
    """Globs on tool names as rules write them (``mcp__SERVER__TOOL``) the user marked
    read-only (``[permissions] read_only``): plan mode lets them run as it lets a tool its
    server annotates ``readOnlyHint``."""
    permission: RuleSet = field(default_factory=RuleSet)
    """The ``[permissions]`` allow/ask/deny rules of every layer, with their files."""
    rule_files: RuleFiles | None = None
    """Where a rule made here ("always", ``/permissions``) is written, and removed from."""

    def allowed(self, server: str, tool: str) -> bool:
        """Whether the config's rules let the model see the tool (filters aside)."""
        rules = self.rules.get(server, ServerRules())
        return _matches(tool, rules.allow) and not _matches(tool, rules.deny)

    def offered(self, server: str, tool: str) -> bool:
        """Whether the model may see the tool at all: the rules allow it and the filter
        lets it through."""
        return self.allowed(server, tool) and self.filter.allows(server, tool)

    def judge(self, server: str, tool: str, fp: str = "", *, asks: str = "",
              hints: Sequence[str] = (), arguments: Mapping[str, Any] | None = None
              ) -> Judgement:
        """What to do with a call of ``tool`` whose current definition has digest ``fp``
        (empty for tools without one, such as local functions), with ``arguments``.
        ``asks``: the server's own reason to ask before every call of it (the spec's
        ``asks``), which no list, "always allow", pinned definition or mode overrides; the
        deny rules still come first. ``hints``: the server's annotations (``read-only``
        lets a call run in plan mode).

        The order: the server's allow and deny lists and this run's filter; the deny
        rules (``[permissions]``, every layer's); plan mode (refuses what does not only
        read); the server's own "always ask"; the ask rules and the server's ask list (a
        project's allow rule never turns a user's ask into a yes); the allow rules; the
        server's auto list and the tools a person always allowed (a changed definition
        asks again); auto mode; else ask."""
        if not self.allowed(server, tool):
            rules = self.rules.get(server, ServerRules())
            if _matches(tool, rules.deny):
                return Judgement("deny", f"{tool} is in the deny list of {server}",
                                 by=f"the deny list of {server}")
            return Judgement("deny", f"{tool} is not in the allow list of {server}",
                             by=f"the allow list of {server}")
        if not self.filter.allows(server, tool):
            return Judgement("deny", self.filter.why_not(server, tool), by="the tool filter")
        if rule := self.permission.first("deny", server, tool, arguments):
            return Judgement("deny", f"refused by {rule.said()}", by=rule.said())
        if self.mode == "plan" and not self.reads_only(server, tool, hints):
            return Judgement("deny", PLAN_REFUSAL, by="plan mode")
        if asks:
            return Judgement("ask", asks, firm=True)
        if rule := self.permission.first("ask", server, tool, arguments):
            return Judgement("ask", f"asks: {rule.said()}", by=rule.said())
        if _matches(tool, self.rules.get(server, ServerRules()).ask):  # an ask, as a rule's
            return Judgement("ask", "always asks (the server's ask list)",
                             by=f"the ask list of {server}")
        if rule := self.permission.first("allow", server, tool, arguments):
            return Judgement("auto", by=rule.said())
        return self._lists(server, tool, fp)

    def _lists(self, server: str, tool: str, fp: str) -> Judgement:
        """After the rules: the server's ask and auto lists, "always allow" (a changed
        definition asks again), auto mode, else ask."""
        standing = self.standing(server, tool)
        rules = self.rules.get(server, ServerRules())
        if standing == "ask" and _matches(tool, rules.ask):
            return Judgement("ask", "always asks (the server's ask list)",
                             by=f"the ask list of {server}")
        if standing == "auto":
            pinned = self.store.entry(server, tool).get("fingerprint")
            if fp and pinned and pinned != fp:
                if self.mode == "auto":
                    return Judgement("auto", by="auto mode")
                return Judgement("ask", "its definition (description or parameters) "
                                        "changed since it was allowed",
                                 by="a changed definition")
            if fp and not pinned:
                self.store.set(server, tool, fp)
            listed = _matches(tool, rules.auto)
            return Judgement("auto", by=f"the auto list of {server}" if listed
                             else "always allowed (your answer earlier)")
        if self.mode == "auto":
            return Judgement("auto", by="auto mode")
        return Judgement("ask", "not auto-approved")

    def reads_only(self, server: str, tool: str, hints: Sequence[str] = ()) -> bool:
        """Whether plan mode lets a call of the tool run: its server annotates it
        ``readOnlyHint``, or the user marked it read-only."""
        return "read-only" in hints or names_match(self.read_only, server, tool)

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

    def permission_rules(self) -> list[RuleEntry]:
        """Every rule in force, deny first, each with its file and line."""
        entries = self.permission.entries()
        return sorted(entries, key=lambda e: KINDS.index(e.kind))

    def add_rule(self, kind: str, text: str) -> str | None:
        """Apply a ``kind`` rule now and write it to the user's config (``[permissions]``,
        comments kept). Returns a problem to show (a rule that does not parse is not
        applied; one that cannot be written applies for this session only), or None."""
        if kind not in KINDS:
            return f"{kind!r} is not a kind of rule (allow, ask or deny)"
        try:
            entry = RuleEntry(kind, text)
            RuleSet([entry])
        except RuleSyntaxError as exc:
            return f"rule {text!r}: {exc}"
        problem = None
        if self.rule_files is not None:
            try:
                entry = self.rule_files.add(kind, text)
            except Exception as exc:  # a file that cannot be written must not undo it
                problem = f"applied for this session only: {exc}"
        self.permission = RuleSet([*self.permission.entries(), entry])
        return problem

    def remove_rule(self, entry: RuleEntry) -> str | None:
        """Take a rule out of its file and out of force now. Returns why it could not
        be (its file cannot be written: it stays in force), or None."""
        if entry not in self.permission.entries():
            return f"{entry.kind} rule {entry.text!r} is not in force"
        if entry.file is not None:
            if self.rule_files is None:
                return f"cannot edit {entry.file} from here"
            try:
                self.rule_files.remove(entry)
            except Exception as exc:
                return str(exc)
        kept = list(self.permission.entries())
        kept.remove(entry)
        self.permission = RuleSet(kept)
        return None

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
