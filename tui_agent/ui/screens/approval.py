"""The approval modal: one tool call, everything needed to judge it, and five answers.
The server's hints about the tool (read-only, destructive, non-destructive, open-world,
idempotent) are badges under the title, destructive in the error colour: hints from an
untrusted server, shown, never acted on by themselves (only the person's ``s`` relies on
them, to leave a tool that may be destructive asking).

``y`` approve once · ``a`` always allow this tool (written to the config file the server
came from; a changed definition asks again) · ``w`` always allow this tool with these
arguments (an allow rule in the user's config, ``[permissions] allow``; offered when the
call has plain arguments, and naming those a rule cannot hold) · ``n`` deny · ``r``
deny with a reason the model receives · ``esc`` deny. For a call a code-mode script
makes, the script is shown too, and ``s`` approves this call and every later one of the
same script run to a tool the script names in its text (listed under it); a tool it
reaches another way asks again, and so does each call of a named tool that writes files
(with its diff) or may be destructive (listed apart).

A call a sub-agent makes says which one asks (``asked by the sub-agent explore
(call_1)``): its answer goes back to that sub-agent, not to the conversation's model.

Server names, tool names, descriptions, arguments and agent names come from MCP servers,
agent files and the model: all of it is cleaned of control characters and shown as inert
content. The arguments are highlighted JSON in a scrolling pane; nothing is cut. A call
that writes a file shows the diff it would make instead (computed here, coloured, whole;
a new file as additions; a path outside the server's roots flagged), and ``d`` swaps it
with the arguments.
"""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Input, Static

from tui_agent.core.diffs import FileChange
from tui_agent.core.permissions import Decision, PendingCall
from tui_agent.core.permissions.rules import rule_for, scalar_arguments
from tui_agent.tools.text import clean
from tui_agent.ui.screens.question import Question
from tui_agent.ui.widgets.messages import key_hints, plain

CHANGED = "changed since"


class ApprovalScreen(Question[Decision]):
    DEFAULT_CSS = """
    ApprovalScreen .asker { color: $secondary; text-style: bold; }
    ApprovalScreen .why.-changed { color: $error; text-style: bold; }
    ApprovalScreen .label { color: $text-muted; text-style: italic; }
    ApprovalScreen .description { margin: 0 0 1 0; }
    ApprovalScreen .script { background: $surface; }
    ApprovalScreen #reason { display: none; }
    ApprovalScreen.-reason #reason { display: block; }
    ApprovalScreen .keys { dock: bottom; }
    ApprovalScreen .badges { margin: 0 0 1 0; }
    ApprovalScreen .flag { color: $error; text-style: bold; }
    ApprovalScreen .diff { background: $surface; }
    ApprovalScreen .-args, ApprovalScreen.-args .-diff { display: none; }
    ApprovalScreen.-args .-args { display: block; }
    """

    BINDINGS = [
        Binding("y", "approve", "Approve once"),
        Binding("a", "always", "Always allow"),
        Binding("w", "always_with", "Always allow with these arguments", show=False),
        Binding("s", "script", "Approve the script's listed tools", show=False),
        Binding("n", "deny", "Deny"),
        Binding("r", "reason", "Deny with a reason"),
        Binding("d", "swap", "Diff or arguments", show=False),
        Binding("escape", "deny", "Deny", show=False),
    ]

    def __init__(self, call: PendingCall, *, remember_in: str | None = None,
                 heading: str | None = None) -> None:
        super().__init__()
        self.call = call
        self.remember_in = remember_in
        self.heading = heading
        """In place of "Allow TOOL from SERVER?" (``/init``: "Write AGENTS.md?")."""
        self.rule, self.left_out = rule_for(call.server, call.tool, call.arguments) \
            if call.fingerprint and call.rule_helps and scalar_arguments(call.arguments) \
            else ("", [])
        """The allow rule ``w`` writes (this tool with these arguments), and the
        arguments it cannot hold: empty when the call has no plain argument, or when a
        rule would not stop it asking (an ask rule, a hook's ask, a skill)."""

    def compose(self) -> ComposeResult:
        call = self.call
        with Vertical(id="dialog"):
            yield Static(Content.assemble((clean(self.heading), "bold")) if self.heading else
                         Content.assemble("Allow ", (clean(call.tool), "bold"), " from ",
                                          (clean(call.server), "bold"), "?"), classes="title")
            if call.agent:
                yield Static(plain(f"asked by the sub-agent {call.agent}"), classes="asker")
            changed = CHANGED in call.why
            why = ("⚠ " if changed else "") + f"Asking because: {clean(call.why)}"
            yield Static(plain(why), classes="why -changed" if changed else "why")
            if call.hints:
                yield Static(badges(call.hints), classes="badges")
            with VerticalScroll(id="body"):
                yield Static("description", classes="label")
                yield Static(plain(call.description or "(the server gave none)"),
                             classes="description")
                if call.change is not None:
                    yield from change_widgets(call.change)
                more = "" if call.change is None else " -args"
                yield Static("arguments", classes="label" + more)
                text = clean(json.dumps(call.arguments, indent=2, ensure_ascii=False))
                yield Static(highlight(text, language="json"), classes="arguments" + more)
                if call.parent:
                    yield Static(f"\ncalled by the script {clean(call.parent)}",
                                 classes="label")
                    yield Static(highlight(clean(call.script) or "(not shown)",
                                           language="python"), classes="script")
                    yield Static(plain(script_scope(call)), classes="label")
            if self.rule:
                left = f" (any {', '.join(self.left_out)})" if self.left_out else ""
                yield Static(plain(clean(f"w writes the allow rule {self.rule}{left}")),
                             classes="label rule")
            yield Input(placeholder="why not? (enter sends it to the model; esc denies "
                                    "without a reason)", id="reason")
            yield Static(self._keys(), classes="keys")

    def _keys(self) -> Content:
        keys = [("y", "approve once")]
        if self.call.fingerprint:
            where = f" (in {clean(self.remember_in)})" if self.remember_in else ""
            keys.append(("a", f"always allow{where}"))
        if self.rule:
            keys.append(("w", "always with these arguments"))
        if self.call.script_approvable:
            keys.append(("s", "approve the listed tools"))
        keys += [("n", "deny"), ("r", "deny with a reason"), ("esc", "deny")]
        if self.call.change is not None:
            keys.append(("d", "diff/arguments"))
        return key_hints(keys)

    def action_swap(self) -> None:
        if self.call.change is not None:
            self.toggle_class("-args")

    def action_approve(self) -> None:
        self.dismiss(Decision.approve())

    def action_always(self) -> None:
        if self.call.fingerprint:
            self.dismiss(Decision.approve("always allowed", always=True))

    def action_always_with(self) -> None:
        if self.rule:
            self.dismiss(Decision(True, "always allowed with these arguments",
                                  rule=self.rule))

    def action_script(self) -> None:
        if self.call.script_approvable:
            self.dismiss(Decision.whole_script())

    def action_deny(self) -> None:
        self.dismiss(Decision.deny())

    def action_reason(self) -> None:
        self.add_class("-reason")
        self.query_one("#reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(Decision.deny(event.value.strip() or None))


def change_widgets(change: FileChange) -> ComposeResult:
    """What a call would do to its file: the path, any warning, the diff."""
    what = "creates" if change.new_file else "changes"
    yield Static(plain(f"{what} {change.summary()}"), classes="label -diff")
    for warning in change.warnings:
        yield Static(plain(f"⚠ {warning}"), classes="flag -diff")
    if change.diff:
        yield Static(diff_content(change.diff), classes="diff -diff")


DIFF_STYLE = {"+": "$text-success on $success-muted", "-": "$text-error on $error-muted",
              "@": "$text-accent", "\\": "$text-muted italic"}


def diff_content(diff: str) -> Content:
    """A unified diff, each line in its colour (file headers bold)."""
    parts: list[tuple[str, str] | str] = []
    for line in clean(diff).splitlines(keepends=True):
        header = line.startswith(("+++ ", "--- "))
        parts.append((line, "bold" if header else DIFF_STYLE.get(line[:1], "")))
    return Content.assemble(*parts)


BADGE_STYLE = {"destructive": "bold $text-error on $error-muted",
               "read-only": "$text-success on $success-muted",
               "open-world": "$text-accent on $accent-muted",
               "idempotent": "$text-muted on $boost",
               "non-destructive": "$text-muted on $boost"}


def badges(hints: tuple[str, ...]) -> Content:
    """The server's hints as badges, destructive in the error colour. Hints from an
    untrusted server: they inform, and approve nothing."""
    parts: list[Content | tuple[str, str] | str] = []
    for hint in hints:
        parts += [(f" {hint} ", BADGE_STYLE.get(hint, "")), " "]
    parts.append(("(the server's own hints)", "$text-muted italic"))
    return Content.assemble(*parts)


def script_scope(call: PendingCall) -> str:
    """What ``s`` approves ahead (tools the script names, no other) and which of the
    tools it names still ask at each call."""
    return "\n" + "\n".join(call.script_scope())
