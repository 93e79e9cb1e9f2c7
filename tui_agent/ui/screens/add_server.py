"""The servers screen's ``a``: one line taking the words of ``tui-agent mcp add``
(``NAME -- COMMAND ARGS`` or ``NAME --url URL``). What is wrong with them is said under
the line, which keeps them for fixing; a server that was added closes the dialog with
the sentence saying so. While an add is being checked, esc waits for it: the write
cannot be called back, and must not happen unsaid."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tui_agent.ui.widgets.messages import plain

Add = Callable[[str], Awaitable[tuple[bool, str]]]
"""Adds the server the words describe: whether it was written, and what to say."""


class AddServerScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    AddServerScreen { align: center middle; background: $background 60%; }
    AddServerScreen #dialog {
        width: 90%; max-width: 100; height: auto; border: thick $accent;
        background: $surface; padding: 0 1;
    }
    AddServerScreen .title { text-style: bold; margin: 0 0 1 0; }
    AddServerScreen .hint { color: $text-muted; }
    AddServerScreen #problem { color: $error; height: auto; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, add: Add) -> None:
        super().__init__()
        self._add = add
        self._busy = False

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Add an MCP server", classes="title")
            yield Static(plain("NAME -- COMMAND [ARGS...]   a program on this machine\n"
                               "NAME --url URL              a remote server "
                               "(--header 'Name: value', --transport sse)\n"
                               "--env K=V, --auto TOOL, --docker IMAGE, --scope project: "
                               "as in 'tui-agent mcp add'"),
                         classes="hint")
            yield Input(placeholder="time -- uvx mcp-server-time", id="words")
            yield Static(id="problem")
            yield Static("enter adds it · esc cancels", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#words", Input).focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._busy or not event.value.strip():
            return
        self._busy = True
        problem = self.query_one("#problem", Static)
        problem.update(plain("checking..."))
        try:
            ok, said = await self._add(event.value)
        finally:
            self._busy = False
        if ok:
            self.dismiss(said)
        else:
            problem.update(plain(said))

    def action_cancel(self) -> None:
        # The add runs on in its thread whatever the dialog does: closing now would let
        # it write the server with nothing said. It answers within seconds (the URL
        # check's timeout), so esc waits for it instead.
        if self._busy:
            self.query_one("#problem", Static).update(
                plain("still checking: the answer comes within seconds (esc closes the "
                      "dialog then)"))
            return
        self.dismiss(None)
