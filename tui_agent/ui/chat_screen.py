"""The chat's screen: the transcript above the prompt, the status bar and the key bar;
the keys that scroll the transcript from anywhere, and typing that goes to the prompt
wherever the focus went."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import Static

from tui_agent.config import paths
from tui_agent.ui.widgets.prompt import PromptHistory, PromptInput
from tui_agent.ui.widgets.status import StatusBar
from tui_agent.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui_agent.ui.widgets.command_menu import CommandMenu


class ChatScreen(Screen[None]):
    """The transcript above the prompt. Page up / page down (and ctrl+home / ctrl+end)
    scroll the transcript wherever the focus is; typing or pasting with the focus on
    anything that does not take text (a message, a code block, the transcript) goes on
    in the prompt.

    Shift+tab cycles the permission mode (as in Claude Code and gemini-cli), not the
    focus: alt+up walks the focus up from the prompt to the messages and code blocks,
    latest first, and alt+down (or tab) back down. (A modal's own fields keep tab and
    shift+tab.)"""

    BINDINGS = [
        Binding("shift+tab", "app.cycle_mode", "Mode", show=False),
        Binding("alt+up", "app.focus_previous", show=False),
        Binding("alt+down", "app.focus_next", show=False),
        Binding("pageup", "scroll_transcript('page_up')", show=False, priority=True),
        Binding("pagedown", "scroll_transcript('page_down')", show=False, priority=True),
        Binding("ctrl+home", "scroll_transcript('home')", show=False, priority=True),
        Binding("ctrl+end", "scroll_transcript('end')", show=False, priority=True),
    ]

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield Static(id="pending")
        yield Static(id="tab-hint")
        yield PromptInput(PromptHistory(paths.state_dir() / "prompt-history.jsonl"), id="prompt")
        yield StatusBar(id="status")
        yield Container(id="footer-row")

    def on_mount(self) -> None:
        prompt = self.query_one(PromptInput)
        prompt.make_menu = self.command_menu
        prompt.focus()

    def command_menu(self) -> CommandMenu:
        """The ``/`` menu, above the prompt: mounted the first time a command is typed (its
        CSS and its widget are not on the way to the first frame)."""
        from tui_agent.ui.widgets.command_menu import CommandMenu

        found = self.query(CommandMenu)
        if found:
            return found.first()
        menu = CommandMenu(id="command-menu")
        self.mount(menu, before=self.query_one(PromptInput))
        return menu

    def on_command_menu_chosen(self, event: CommandMenu.Chosen) -> None:
        """A click in the menu: the prompt completes it (the menu and the prompt are
        siblings: the message comes up to here)."""
        self.query_one(PromptInput).on_command_menu_chosen(event)

    def on_prompt_input_hinted(self, event: PromptInput.Hinted) -> None:
        """Tab's word, in the line above the prompt: a toast (bottom right) covered the
        end of what was typed."""
        from textual.content import Content

        hint = self.query_one("#tab-hint", Static)
        hint.update(Content(event.text))  # names of commands and prompts: cleaned text
        hint.set_class(event.warning, "-warning")
        hint.display = True

    def on_text_area_changed(self) -> None:
        """Typing on makes tab's word stale: the line goes."""
        self.query_one("#tab-hint").display = False

    def show_footer(self) -> None:
        """The key bar, in its row. Textual's ``Footer`` draws its keys only after the first
        frame anyway; it comes then, and its CSS (bigger than all of ours) is not parsed
        twice on the way to that frame."""
        from textual.widgets import Footer

        self.query_one("#footer-row").mount(Footer())

    def action_scroll_transcript(self, how: str) -> None:
        """``how``: page_up, page_down, home or end (at once: a page must not lag). A page
        down that reaches the bottom follows the reply again, as ``end`` does."""
        transcript = self.query_one(Transcript)
        getattr(transcript, f"scroll_{how}")(animate=False)
        if how == "page_down" and transcript.scroll_target_y >= transcript.max_scroll_y:
            transcript.scroll_end(animate=False)

    def on_key(self, event: events.Key) -> None:
        """A key that reached the screen unused: a printable one, enter, backspace or
        delete goes to the prompt, unless the focused widget (or one around it) has a
        binding for it, such as a message's ``c``. (A text field never lets such keys
        through.)"""
        edits = event.key in ("backspace", "delete")
        if not (event.is_printable or event.key == "enter" or edits) \
                or event.key in self.active_bindings:
            return
        prompt = self.query_one(PromptInput)
        if self.focused is prompt or prompt.disabled:
            return
        if edits:  # a key the prompt binds, not one it reads: its action, there
            event.stop()
            prompt.focus()
            getattr(prompt, "action_delete_left" if event.key == "backspace"
                    else "action_delete_right")()
            return
        self._to_prompt(prompt, event)

    def on_paste(self, event: events.Paste) -> None:
        """A paste that reached the screen unused goes into the prompt too."""
        prompt = self.query_one(PromptInput)
        if self.focused is not prompt and not prompt.disabled:
            self._to_prompt(prompt, event)

    @staticmethod
    def _to_prompt(prompt: PromptInput, event: events.Key | events.Paste) -> None:
        """The prompt handles ``event`` as its own. The same event goes on, stopped: it
        must not bubble back up to the app, which would hand it to the prompt again."""
        event.stop()
        prompt.focus()
        prompt.post_message(event)
