"""``/tools``: switch servers and tools on and off for this conversation.

The switches narrow what the config (and ``--servers`` / ``--tools``) allows; they
never widen it, and they are not written anywhere: ``/new`` starts again from the
command line's filter. ``space`` or ``enter`` switches the highlighted line; a server
switched off takes all its tools with it. ``esc`` closes.

Server and tool names come from MCP servers: they are shown as inert text.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from tui_agent.core.filters import SEP, ToolFilter
from tui_agent.core.permissions import Policy
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted
from tui_agent.ui.widgets.messages import plain


def choices(policy: Policy, base: ToolFilter,
            servers: list[tuple[str, list[str]]]) -> list[Selection[str]]:
    """One line per server and per tool the config and ``base`` (the command line's
    filter) allow, switched on as ``policy.filter`` has them now."""
    now = policy.filter
    out: list[Selection[str]] = []
    for server, tools in servers:
        offered = [t for t in tools if policy.allowed(server, t) and base.allows(server, t)]
        out.append(Selection(plain(f"{clean(server)}  ({counted(len(offered), 'tool')})"), server,
                             server not in now.off))
        for tool in offered:
            out.append(Selection(plain(f"    {clean(tool)}"), f"{server}{SEP}{tool}",
                                 f"{server}{SEP}{tool}" not in now.off))
    return out


class ToolsScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ToolsScreen { align: center middle; background: $background 60%; }
    ToolsScreen #dialog {
        width: 80%; max-width: 100; height: 80%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    ToolsScreen .title { text-style: bold; margin: 0 0 1 0; }
    ToolsScreen .hint { color: $text-muted; dock: bottom; }
    ToolsScreen SelectionList { height: 1fr; }
    """

    BINDINGS = [Binding("escape", "dismiss_screen", "Close")]

    def __init__(self, policy: Policy, base: ToolFilter,
                 servers: list[tuple[str, list[str]]]) -> None:
        super().__init__()
        self.policy = policy
        self.base = base
        self.servers = servers

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Tools for this conversation", classes="title")
            found = choices(self.policy, self.base, self.servers)
            if found:
                yield SelectionList[str](*found)
            else:
                yield Static("No tools: no MCP server is running, or the config and the "
                             "command line's filter allow none.")
            yield Static("space/enter switch · a server takes its tools with it · this "
                         "conversation only (/new starts from the command line's filter) "
                         "· esc close", classes="hint")

    def on_selection_list_selection_toggled(
            self, event: SelectionList.SelectionToggled[str]) -> None:
        value = event.selection.value
        self.policy.filter = self.policy.filter.switched(
            value, value in event.selection_list.selected)

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
