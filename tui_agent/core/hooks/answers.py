"""What a hook answered, read as Claude Code reads it, and several hooks' answers combined.

Exit 0: stdout is JSON when it parses as an object (``continue``/``stopReason``,
``systemMessage``, ``suppressOutput``, ``decision: "block"`` + ``reason``, and
``hookSpecificOutput`` with ``permissionDecision``, ``permissionDecisionReason``,
``updatedInput``, ``additionalContext``); other text is context for the model on
``UserPromptSubmit`` and ``SessionStart``, and ignored elsewhere. Exit 2: the hook blocks,
its stderr is the reason. Any other end (another status, a crash, a timeout, output that
looks like JSON but is not) is a warning for the person naming the hook, and the call goes
on. Every text is cleaned of terminal controls (:func:`~tui_agent.tools.text.clean`) and
cut to :data:`MAX_TEXT` characters. Combined: deny beats ask beats allow, any block blocks,
any ``continue: false`` stops, contexts and messages are all kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tui_agent.core.hooks.process import Ran
from tui_agent.tools.text import clean

Decision = Literal["allow", "deny", "ask", ""]
MAX_TEXT = 10_000
"""Characters of one hook's text (reason, context, message) kept, as Claude Code caps
``additionalContext``."""
TEXT_CONTEXT = ("UserPromptSubmit", "SessionStart")
"""Events whose plain stdout is context for the model."""
_RANK = {"deny": 3, "ask": 2, "allow": 1, "": 0}


@dataclass(frozen=True)
class HookAnswer:
    """One hook's answer."""

    command: str
    decision: Decision = ""
    block: bool = False
    reason: str = ""
    context: str = ""
    message: str = ""
    """``systemMessage``: shown to the person."""
    stop: bool = False
    stop_reason: str = ""
    updated_input: dict[str, Any] | None = None
    warning: str = ""

    @property
    def by(self) -> str:
        return clean(f"hook: {self.command}")


@dataclass(frozen=True)
class HookResult:
    """Every hook of one event, combined."""

    answers: tuple[HookAnswer, ...] = ()

    @property
    def deciding(self) -> HookAnswer | None:
        """The answer whose permission decision wins (deny > ask > allow); a block is a
        deny."""
        best = max(self.answers, key=lambda a: _RANK["deny" if a.block else a.decision],
                   default=None)
        return best if best is not None and (best.block or best.decision) else None

    @property
    def decision(self) -> Decision:
        best = self.deciding
        return "" if best is None else ("deny" if best.block else best.decision)

    @property
    def blocked(self) -> bool:
        return any(a.block for a in self.answers)

    @property
    def reason(self) -> str:
        """Why, in the deciding hooks' words (all the blocking ones for a block)."""
        if self.blocked:
            return "\n".join(a.reason for a in self.answers if a.block and a.reason)
        best = self.deciding
        return best.reason if best is not None else ""

    @property
    def by(self) -> str:
        best = self.deciding
        return best.by if best is not None else ""

    @property
    def context(self) -> str:
        return "\n".join(a.context for a in self.answers if a.context)

    @property
    def stopped(self) -> HookAnswer | None:
        return next((a for a in self.answers if a.stop), None)

    @property
    def updated_input(self) -> dict[str, Any] | None:
        """The arguments a hook replaced, as Claude Code honours ``updatedInput``: only
        with an ``allow`` or ``ask`` decision (the deciding hook's, else the first such);
        none when a hook denies."""
        best = self.deciding
        if best is not None and (best.block or best.decision == "deny"):
            return None
        if best is not None and best.updated_input is not None:
            return best.updated_input
        return next((a.updated_input for a in self.answers if a.updated_input is not None
                     and a.decision in ("allow", "ask")), None)

    def notes(self) -> list[str]:
        """What the person is told: each hook's warning and ``systemMessage``."""
        return [n for a in self.answers for n in (a.warning, a.message) if n]


def read(event: str, ran: Ran) -> HookAnswer:
    """One hook's run as its answer."""
    who = f"hook `{_short(ran.command)}`"
    if ran.code is None:
        return HookAnswer(ran.command, warning=clean(f"{who} {ran.problem}"))
    if ran.code == 2:
        why = _text(ran.stderr) or f"blocked by {who}"
        return HookAnswer(ran.command, decision="deny" if event == "PreToolUse" else "",
                          block=True, reason=why)
    if ran.code != 0:
        how = f"was killed by signal {-ran.code}" if ran.code < 0 \
            else f"exited with status {ran.code}"
        said = _text(ran.stderr)
        return HookAnswer(ran.command, warning=clean(
            f"{who} {how}" + (f": {_short(said, 300)}" if said else "")))
    out = ran.stdout.strip()
    if out.startswith(("{", "[")):
        try:
            data = json.loads(out)
        except ValueError as exc:
            return HookAnswer(ran.command, warning=clean(
                f"{who} printed output that is not valid JSON ({exc}); ignored"
                + (" (it was cut at 1 MB)" if ran.cut else "")))
        if isinstance(data, dict):
            return _from_json(event, ran.command, data, who)
    if out and event in TEXT_CONTEXT:
        return HookAnswer(ran.command, context=_text(out))
    return HookAnswer(ran.command)


def _from_json(event: str, command: str, data: Mapping[str, Any], who: str) -> HookAnswer:
    special = data.get("hookSpecificOutput")
    special = special if isinstance(special, Mapping) else {}
    decision = special.get("permissionDecision") if event == "PreToolUse" else None
    old = data.get("decision")
    if event == "PreToolUse" and decision is None and old in ("approve", "block"):
        decision = "allow" if old == "approve" else "deny"  # the older PreToolUse form
    warning = ""
    if decision not in (None, "allow", "deny", "ask", "defer"):
        warning = f"{who} answered permissionDecision {decision!r}, not allow, deny or ask"
        decision = None
    updated = special.get("updatedInput")
    if updated is not None and not isinstance(updated, dict):
        warning = f"{who} answered updatedInput that is not an object; ignored"
        updated = None
    block = old == "block" and event != "PreToolUse"
    reason = special.get("permissionDecisionReason") if decision else data.get("reason")
    return HookAnswer(
        command, decision=decision if decision in ("allow", "deny", "ask") else "",
        block=block, reason=_text(reason), context=_text(special.get("additionalContext")),
        message=_text(data.get("systemMessage")), stop=data.get("continue") is False,
        stop_reason=_text(data.get("stopReason")), updated_input=updated,
        warning=clean(warning))


def combine(answers: Sequence[HookAnswer]) -> HookResult:
    return HookResult(tuple(answers))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    text = clean(value.strip())
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " [cut]"


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
