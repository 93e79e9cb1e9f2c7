"""What a server asks the person, in the middle of a call (MCP elicitation).

The form (``form.FormScreen``): one input per field of the server's schema, the schema's
defaults filled in, the required ones marked; ``ctrl+s`` or the Send button sends (each
problem is shown under its field, and nothing is sent while there is one) · ``ctrl+d``
declines · ``esc`` cancels. The fields scroll; the buttons and keys stay in sight.

The link: the server, why it asks, and the URL in full; ``o`` opens it in the browser and
tells the server so · ``n`` declines · ``esc`` cancels. Nothing opens by itself.

Everything shown came from the server: cleaned already, and shown as inert text.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui_agent.tools.elicit import Answer, UrlAsk
from tui_agent.ui.screens.form import FormScreen
from tui_agent.ui.screens.question import Question
from tui_agent.ui.widgets.messages import key_hints, plain


class ElicitScreen(FormScreen):
    """What a server asks for: ``ctrl+s`` sends · ``ctrl+d`` declines · ``esc`` cancels."""

    BINDINGS = [Binding("ctrl+d", "decline", "Decline", priority=True)]  # over a field's own
    ACTIONS = (("send", "Send", "ctrl+s", "send"), ("decline", "Decline", "ctrl+d", "decline"),
               ("cancel", "Cancel", "esc", "cancel"))

    def action_decline(self) -> None:
        self.dismiss(Answer("decline"))


class UrlConsent(Question[Answer]):
    BINDINGS = [
        Binding("o", "open", "Open the link"),
        Binding("n", "decline", "Decline"),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    def __init__(self, ask: UrlAsk) -> None:
        super().__init__()
        self.ask = ask

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.assemble((self.ask.server, "bold"),
                                          " asks you to open a link"), classes="title")
            yield Static(plain(self.ask.message or "(no reason given)"), classes="why")
            with VerticalScroll(id="body"):
                yield Static(plain(self.ask.url))
            yield Static(key_hints([("o", "open it in the browser"), ("n", "decline"),
                                    ("esc", "cancel")]), classes="keys")

    def action_open(self) -> None:
        from tui_agent.tools.auth.browser import open_in_browser

        open_in_browser(self.ask.url)
        self.dismiss(Answer("accept"))

    def action_decline(self) -> None:
        self.dismiss(Answer("decline"))

    def action_cancel(self) -> None:
        self.dismiss(Answer("cancel"))
