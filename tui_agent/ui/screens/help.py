"""``/help`` (f1): keys, slash commands, the commands from files (with the files that
could not be used, named with their line), and the MCP prompts the servers offer."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from tui_agent.tools.text import clean
from tui_agent.ui.commands import COMMANDS

KEYS = (
    ("enter", "send the message"),
    ("ctrl+j", "new line (or end a line with \\ and press enter)"),
    ("up / down", "earlier prompts (on the first / last line)"),
    ("@", "at the start of a word: pick a project file to send with the message"),
    ("ctrl+e", "write the prompt in $EDITOR"),
    ("paste", "a path to an image attaches the image"),
    ("/", "at the start: the menu of commands (up/down, tab or enter completes, esc)"),
    ("tab", "complete a /command, or an @path with the file picker"),
    ("shift+tab", "permission mode: default → plan (read-only) → auto (no asking)"),
    ("alt+up", "focus the messages and code blocks, latest first (or click one); c copies"),
    ("pgup / pgdn", "scroll the conversation (ctrl+home / ctrl+end: top, bottom)"),
    ("esc", "stop the reply or tool call in flight (every sub-agent with it)"),
    ("enter / x", "on an agent card: show its transcript / stop that one sub-agent"),
    ("ctrl+p", "command palette: every command, searchable"),
    ("ctrl+s", "servers screen"),
    ("ctrl+t", "choose the model"),
    ("ctrl+n", "new conversation"),
    ("ctrl+q", "quit"),
)
APPROVAL = (("y", "approve once"), ("a", "always allow (written to the config)"),
            ("n", "deny"), ("r", "deny with a reason the model receives"), ("esc", "deny"),
            ("d", "a call that writes a file: its diff or its arguments"))


KEY_COLUMN = 30
"""The most cells the key column takes (a server's long prompt name wraps in it)."""


class Section(Vertical):
    """A titled table of two columns: a description too long for its line wraps in its
    own column, under its first words, never under the keys."""

    DEFAULT_CSS = """
    Section { height: auto; margin: 1 0 0 0; }
    Section .title { text-style: bold; color: $accent; }
    Section Horizontal { height: auto; }
    Section .key { text-style: bold; height: auto; }
    Section .what { width: 1fr; height: auto; }
    """

    def __init__(self, title: str, rows: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text, self.rows = title, list(rows)

    def compose(self) -> ComposeResult:
        width = min(max((len(k) for k, _ in self.rows), default=0), KEY_COLUMN) + 2
        yield Static(Content(self.title_text), classes="title")
        for key, what in self.rows:
            with Horizontal():
                label = Static(Content(key), classes="key")
                label.styles.width = width
                yield label
                yield Static(Content(what), classes="what")


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background 60%; }
    HelpScreen #help {
        width: 90%; max-width: 100; height: 90%;
        border: thick $primary; background: $surface; padding: 0 2;
    }
    """
    BINDINGS = [Binding("escape,q,f1", "close", "Close")]

    def __init__(self, prompts: Sequence[tuple[str, str]] = (),
                 own: Sequence[tuple[str, str]] = (), unused: Sequence[str] = ()) -> None:
        """``own``: the commands from files (``/name hint``, what and where from), and
        ``unused``: the files that could not be used (each ``file:line: why``); both
        cleaned by the caller."""
        super().__init__()
        self.prompts, self.own, self.unused = list(prompts), list(own), list(unused)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Section("Keys", KEYS)
            yield Section("Commands (also in ctrl+p)", [(c.usage, c.help) for c in COMMANDS])
            yield Section("Your commands (commands/ folders, .claude/commands/)",
                          self.own or [("", "none: a markdown file in a commands/ folder "
                                        "is one (docs/commands.md)")])
            if self.unused:
                yield Section("Command files not used", [("", why) for why in self.unused])
            yield Section("In the approval prompt", APPROVAL)
            prompts = [(f"/{clean(name)}", clean(desc)) for name, desc in self.prompts]
            yield Section("MCP prompts (/SERVER:PROMPT key=value ...)",
                          prompts or [("", "no server offers prompts")])

    def action_close(self) -> None:
        self.dismiss(None)
