"""``/permissions``: the permission rules in force and the mode, and removing a rule.

One line a rule, in the order the policy checks them (deny, ask, allow): its kind, its
text and where it is written (``file:line``; "this session" for one made here that could
not be written). ``d`` (or ``delete``) on the highlighted rule asks to confirm, then ``y``
takes it out of its file (comments and layout kept) and out of force at once; a file that
cannot be written says why and the rule stays. ``esc`` closes (or cancels the question).

Rules come from config files, a trusted project's among them: shown as inert text.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.config.rule_text import RuleEntry
from tui_agent.core.permissions import Policy
from tui_agent.core.permissions.modes import MODE_WORDS
from tui_agent.core.permissions.rules import place
from tui_agent.tools.text import clean
from tui_agent.ui.widgets.messages import plain

HINT = "d remove the highlighted rule · esc close"


def rule_line(entry: RuleEntry, width: int = 0) -> str:
    """``deny   mcp__fs__write_file(path=/etc/**)   ~/.config/tui-agent/config.toml:3``,
    the rule padded to ``width`` so the places line up."""
    return (f"{entry.kind:<5}  {clean(entry.text):<{width}}   "
            f"{clean(place(entry) or 'this session')}")


class PermissionsScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    PermissionsScreen { align: center middle; background: $background 60%; }
    PermissionsScreen #dialog {
        width: 90%; max-width: 120; height: 80%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    PermissionsScreen .title { text-style: bold; }
    PermissionsScreen .mode { color: $text-muted; margin: 0 0 1 0; }
    PermissionsScreen .hint { color: $text-muted; dock: bottom; }
    PermissionsScreen .hint.-confirm { color: $text-warning; text-style: bold; }
    PermissionsScreen OptionList { height: 1fr; }
    """

    BINDINGS = [
        Binding("d,delete", "remove", "Remove the rule"),
        Binding("y", "confirm", "Yes, remove it", show=False),
        Binding("n", "cancel", "Keep it", show=False),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.policy = policy
        self.entries: list[RuleEntry] = []
        self.pending: RuleEntry | None = None
        """The rule ``d`` asked about, until ``y`` or ``n``."""

    def compose(self) -> ComposeResult:
        mode = self.policy.mode
        with Vertical(id="dialog"):
            yield Static("Permission rules (checked deny, then ask, then allow)",
                         classes="title")
            yield Static(plain(f"mode: {mode} ({MODE_WORDS[mode]})"), classes="mode")
            yield OptionList()
            yield Static(HINT, classes="hint")

    def on_mount(self) -> None:
        self.refill()

    def refill(self) -> None:
        self.entries = self.policy.permission_rules()
        options = self.query_one(OptionList)
        options.clear_options()
        if not self.entries:
            options.add_option(Option(plain("No rules: [permissions] allow, ask and deny in "
                                            "a config file add them"), disabled=True))
            return
        width = min(60, max(len(clean(e.text)) for e in self.entries))
        options.add_options(Option(plain(rule_line(e, width))) for e in self.entries)
        options.highlighted = 0

    def _hint(self, text: str, *, confirm: bool = False) -> None:
        hint = self.query_one(".hint", Static)
        hint.update(plain(text))
        hint.set_class(confirm, "-confirm")

    def action_remove(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is None or not self.entries:
            return
        self.pending = self.entries[index]
        where = place(self.pending) or "this session"
        self._hint(f"remove {self.pending.kind} rule {clean(self.pending.text)} "
                   f"({clean(where)})? "
                   "y remove · n keep", confirm=True)

    def action_confirm(self) -> None:
        entry, self.pending = self.pending, None
        if entry is None:
            return
        problem = self.policy.remove_rule(entry)
        self.refill()
        self._hint(f"not removed: {clean(problem)} · {HINT}" if problem else
                   f"removed {entry.kind} rule {clean(entry.text)} · {HINT}")

    def action_cancel(self) -> None:
        if self.pending is not None:
            self.pending = None
            self._hint(HINT)

    def action_close(self) -> None:
        if self.pending is not None:
            self.action_cancel()
            return
        self.dismiss(None)
