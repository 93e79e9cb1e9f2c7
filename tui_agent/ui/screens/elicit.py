"""What a server asks the person, in the middle of a call (MCP elicitation).

The form (``form.FormScreen``): one input per field of the server's schema, the schema's
defaults filled in, the required ones marked; ``ctrl+s`` or the Send button sends (each
problem is shown under its field, and nothing is sent while there is one) · ``ctrl+d``
declines · ``esc`` cancels. The fields scroll; the buttons and keys stay in sight.

The link: the server, why it asks, and the URL in full; ``o`` opens it in the browser and
tells the server so · ``c`` copies it · ``n`` declines · ``esc`` cancels. Nothing opens by
itself, and where no browser opens, nothing is told: the link stays in sight (and on the
clipboard with ``c``) until the person answers, ``enter`` once it is open elsewhere.

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
from tui_agent.ui.widgets.messages import copy_out, key_hints, plain


class ElicitScreen(FormScreen):
    """What a server asks for: ``ctrl+s`` sends · ``ctrl+d`` declines · ``esc`` cancels."""

    BINDINGS = [Binding("ctrl+d", "decline", "Decline", priority=True)]  # over a field's own
    ACTIONS = (("send", "Send", "ctrl+s", "send"), ("decline", "Decline", "ctrl+d", "decline"),
               ("cancel", "Cancel", "esc", "cancel"))

    def action_decline(self) -> None:
        self.dismiss(Answer("decline"))


class UrlConsent(Question[Answer]):
    """A link the server asks the person to open. ``o`` opens it in the browser and, once
    one took it, tells the server so; where none could open it, or after ``c`` copies it,
    the link stays in sight until the person says: ``enter`` once it is open elsewhere,
    ``n`` declines, ``esc`` cancels."""

    DEFAULT_CSS = """
    UrlConsent #said { display: none; color: $warning; margin: 0 0 1 0; }
    UrlConsent #said.-shown { display: block; }
    """
    BINDINGS = [
        Binding("o", "open", "Open the link"),
        Binding("c", "copy", "Copy the link"),
        Binding("enter", "opened", "Opened it", show=False),
        Binding("n", "decline", "Decline"),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    def __init__(self, ask: UrlAsk) -> None:
        super().__init__()
        self.ask = ask
        self.offered = False
        """The link is out (copied, or no browser took it): ``enter`` may accept."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.assemble((self.ask.server, "bold"),
                                          " asks you to open a link"), classes="title")
            yield Static(plain(self.ask.message or "(no reason given)"), classes="why")
            with VerticalScroll(id="body"):
                yield Static(plain(self.ask.url))
            yield Static("", id="said", classes="said")
            yield Static(self._keys(), id="keys", classes="keys")

    def _keys(self) -> Content:
        done = [("enter", "I opened it")] if self.offered else []
        return key_hints([("o", "open it in the browser"), ("c", "copy it"), *done,
                          ("n", "decline"), ("esc", "cancel")])

    def _say(self, text: str) -> None:
        self.offered = True
        said = self.query_one("#said", Static)
        said.update(text)
        said.add_class("-shown")
        self.query_one("#keys", Static).update(self._keys())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.offered if action == "opened" else True

    async def action_open(self) -> None:
        import asyncio

        from tui_agent.tools.auth.browser import opened_in_browser

        if await asyncio.to_thread(opened_in_browser, self.ask.url):
            self.dismiss(Answer("accept"))
            return
        self._say("No browser could be opened here: c copies the link to open it "
                  "elsewhere; enter once it is open.")

    def action_copy(self) -> None:
        copy_out(self, self.ask.url, "the link")
        self._say("The link is on the clipboard: enter once it is open.")

    def action_opened(self) -> None:
        self.dismiss(Answer("accept"))

    def action_decline(self) -> None:
        self.dismiss(Answer("decline"))

    def action_cancel(self) -> None:
        self.dismiss(Answer("cancel"))
