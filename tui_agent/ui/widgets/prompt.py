"""The prompt: a multi-line input with history.

``enter`` sends; ``ctrl+j`` (or a trailing backslash, then ``enter``) starts a new
line; a paste is inserted whole, newlines and all, and never sends. ``up`` on the
first line and ``down`` on the last walk through earlier prompts, which are kept
across runs in the state directory. ``@`` at the start of a word asks for the file
picker, a pasted path to an image attaches the image, and ``ctrl+e`` asks for the
prompt in ``$EDITOR``. ``tab`` completes a ``/command`` or an ``@path`` and never
takes the focus out of the prompt. While the prompt's only word is a ``/command`` being
typed, the completion menu (:class:`~tui_agent.ui.widgets.command_menu.CommandMenu`)
above it offers the commands that fit: ``up``/``down`` move in it, ``tab``/``enter``
complete, ``esc`` closes it; every other key types as ever.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui_agent.ui.commands import MenuEntry
    from tui_agent.ui.widgets.command_menu import CommandMenu

HISTORY_LIMIT = 500


class PromptHistory:
    """Earlier prompts, oldest first, appended to a JSON-lines file as they are sent. The
    file is private to the user (0600), and the config's secrets (``secrets``, set once the
    config is loaded) and every OAuth token learned are masked in it, as in the session
    files; this run's own list keeps what was typed."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.secrets: frozenset[str] = frozenset()
        self.items: list[str] = []
        if path is not None and path.exists():  # the first run has none: no json for it
            import json

            with contextlib.suppress(OSError, UnicodeDecodeError):
                for line in path.read_text(encoding="utf-8").splitlines()[-HISTORY_LIMIT:]:
                    with contextlib.suppress(ValueError):
                        item = json.loads(line)
                        if isinstance(item, str):
                            self.items.append(item)

    def add(self, text: str) -> None:
        if self.items and self.items[-1] == text:
            return
        self.items.append(text)
        if self.path is not None:
            # Here, not at the top: the first frame does without them (~3 ms).
            import json

            from tui_agent.config.interpolate import MIN_SECRET_LEN, mask
            from tui_agent.config.private import open_append
            from tui_agent.config.urls import url_secrets

            # A URL's credentials typed here (``/model NAME https://user:key@host``) are
            # secrets before the command that uses them has run.
            typed = {s for word in text.split() if "://" in word
                     for s in url_secrets(word) if len(s) >= MIN_SECRET_LEN}
            with contextlib.suppress(OSError), \
                    os.fdopen(open_append(self.path), "a", encoding="utf-8") as out:
                out.write(json.dumps(mask(text, self.secrets | typed)) + "\n")


class PromptInput(TextArea):
    """Where the user writes. Posts :class:`PromptInput.Submitted` on ``enter``."""

    BINDINGS = [Binding("ctrl+j", "newline", "New line", show=False),
                Binding("ctrl+e", "editor", "Edit in $EDITOR", show=False)]

    class Submitted(Message):
        """The user sent ``text`` (never empty)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class FileWanted(Message):
        """``@`` was typed at the start of a word: the picker may fill in a path."""

    class ImagePasted(Message):
        """A path to an image file was pasted (it is not inserted as text)."""

        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    class EditorWanted(Message):
        """``ctrl+e``: the prompt wants to be written in ``$EDITOR``."""

    class MenuOpened(Message):
        """The ``/`` menu was shown (or nothing fits what is typed): the app may look for
        commands added since it last read them."""

    class Hinted(Message):
        """Tab has something to say (the commands that fit, or that none does): shown in
        the line above the prompt until the next change, never over what is typed."""

        def __init__(self, text: str, warning: bool = False) -> None:
            super().__init__()
            self.text, self.warning = text, warning

    def __init__(self, history: PromptHistory | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         compact=True, highlight_cursor_line=False)
        self.prompt_history = history or PromptHistory(None)
        self._position: int | None = None  # index into history while browsing it
        self._draft = ""
        self.extra_commands: list[str] = []
        """The servers' prompts (``server:prompt``, cleaned) that tab completes too."""
        self.offered: list[MenuEntry] | None = None
        """Every command the menu and tab offer (built-in, from files, skills, MCP
        prompts), set by the app once known; None: the built-in ones and
        :attr:`extra_commands`."""
        self.menu: CommandMenu | None = None
        """The completion menu, once made."""
        self.make_menu: Callable[[], CommandMenu] | None = None
        """Makes the completion menu the first time a command is typed (given by the screen
        that holds both; None: no menu)."""
        self.reference_at: tuple[int, int] | None = None
        """Just after the ``@`` that last asked for the file picker."""

    async def _on_key(self, event: events.Key) -> None:
        if self._menu_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            row, column = self.cursor_location
            line = self.document.get_line(row)
            if column == len(line) and line.endswith("\\"):
                self.replace("\n", (row, column - 1), (row, column))
                return
            self._submit()
            return
        if event.key == "tab":  # never a way out of the prompt: typing must go on here
            event.stop()
            event.prevent_default()
            self.complete()
            return
        row, column = self.cursor_location
        at_word = column == 0 or self.document.get_line(row)[column - 1:column].isspace()
        await super()._on_key(event)
        if event.character == "@" and at_word:
            self.reference_at = self.cursor_location
            self.post_message(self.FileWanted())

    async def _on_paste(self, event: events.Paste) -> None:
        """A path to an image attaches the image; any other paste is inserted by
        ``TextArea._on_paste``, which Textual calls after this (calling it here too
        inserted every paste twice)."""
        from tui_agent.core.attachments import pasted_image

        image = pasted_image(event.text, Path.cwd())
        if image is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.ImagePasted(image))

    def action_editor(self) -> None:
        self.post_message(self.EditorWanted())

    def complete(self) -> None:
        """Tab: complete the ``/command`` being typed (to the longest common start of the
        commands it could be; the candidates are named when there are several), or open
        the file picker for the ``@path`` being typed; anything else: nothing happens, and
        the focus stays in the prompt (alt+up is the way to the messages)."""
        row, column = self.cursor_location
        before = self.document.get_line(row)[:column]
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            self.reference_at = (row, column - len(word) + 1)
            self.post_message(self.FileWanted())
        elif word.startswith("/") and row == 0 and before == word:
            self._complete_command(word)

    def _complete_command(self, word: str) -> None:
        names = [f"/{e.name}" for e in self.entries()]
        found = [n for n in names if n.lower().startswith(word.lower())]
        if not found:
            self.post_message(self.Hinted(f"tab: no command starts with {word} (f1 lists "
                                          "them)", warning=True))
            return
        start = os.path.commonprefix(found) if len(found) > 1 else found[0] + " "
        row, column = self.cursor_location
        if len(start) > len(word):
            self.replace(start, (row, column - len(word)), (row, column))
        elif len(found) > 1:
            self.post_message(self.Hinted("tab: " + "  ".join(found)))

    def entries(self) -> list[MenuEntry]:
        """What the menu and tab offer."""
        if self.offered is not None:
            return self.offered
        from tui_agent.ui.commands import MenuEntry, built_in_entries

        return built_in_entries() + [MenuEntry(p, kind="MCP") for p in self.extra_commands]

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """The menu follows what is typed (not an earlier prompt shown from history)."""
        self.refresh_menu()

    def refresh_menu(self) -> None:
        """Open, narrow or close the menu for the text as it is now."""
        text = self.text
        typing_a_command = (self._position is None and text.startswith("/")
                            and not text.startswith("//") and "/" not in text[1:]
                            and not any(c.isspace() for c in text))
        if not typing_a_command:
            if self.menu is not None:
                self.menu.close()
            return
        if self.menu is None:
            if self.make_menu is None:
                return
            self.menu = self.make_menu()
        from tui_agent.ui.commands import matching

        opening = not self.menu.display
        self.menu.show(matching(text[1:], self.entries()))
        if opening:
            self.post_message(self.MenuOpened())

    def _menu_key(self, key: str) -> bool:
        """A key the open menu takes: ``up``/``down`` move, ``tab`` completes (the start
        the candidates share, else the highlighted one), ``enter`` completes the
        highlighted one (or, when that is what is typed, lets the prompt send), ``esc``
        closes it. False: the key is the prompt's."""
        menu = self.menu
        entry = menu.current() if menu is not None else None
        if menu is None or entry is None:
            return False
        typed = self.text[1:]
        if key in ("up", "down"):
            menu.move(-1 if key == "up" else 1)
        elif key == "escape":
            menu.close()
        elif key == "tab":
            shared = os.path.commonprefix([e.name.lower() for e in menu.entries])
            if len(shared) > len(typed) and len(menu.entries) > 1:
                self._fill(f"/{menu.entries[0].name[:len(shared)]}")
            else:
                self._fill(f"/{entry.name} ")
        elif key == "enter" and typed.lower() != entry.name.lower():
            self._fill(f"/{entry.name} ")
        else:
            return False
        return True

    def on_command_menu_chosen(self, event: CommandMenu.Chosen) -> None:
        self._fill(f"/{event.name} ")
        self.focus()

    def _fill(self, text: str) -> None:
        """The prompt becomes ``text``, the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def take_typed_reference(self) -> str:
        """What was typed after the ``@`` that asked for the picker, before the picker took
        the keys (it opens a moment later), taken out of the prompt: it becomes the
        picker's query. Nothing if the cursor has left that ``@``'s line."""
        start, self.reference_at = self.reference_at, None
        row, column = self.cursor_location
        if start is None or row != start[0] or column <= start[1]:
            return ""
        typed = self.document.get_line(row)[start[1]:column]
        if "@" in typed or any(c.isspace() for c in typed):
            return ""  # not a path being typed: leave it be
        self.delete(start, (row, column))
        return typed

    def insert_reference(self, path: str) -> None:
        """Complete the ``@`` just typed with ``path`` (quoted if it has spaces)."""
        self.insert((f'"{path}"' if " " in path else path) + " ")

    def action_newline(self) -> None:
        self.insert("\n")

    def _submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        self.prompt_history.add(self.text.rstrip())
        self._position = None
        self.clear()
        self.post_message(self.Submitted(text))

    def action_cursor_up(self, select: bool = False) -> None:
        if select or self.cursor_location[0] > 0 or not self.prompt_history.items:
            super().action_cursor_up(select)
            return
        if self._position is None:
            self._draft, self._position = self.text, len(self.prompt_history.items)
        if self._position > 0:
            self._position -= 1
            self._show(self.prompt_history.items[self._position], end=False)

    def action_cursor_down(self, select: bool = False) -> None:
        last = self.document.line_count - 1
        if select or self.cursor_location[0] < last or self._position is None:
            super().action_cursor_down(select)
            return
        self._position += 1
        if self._position >= len(self.prompt_history.items):
            self._position = None
            self._show(self._draft, end=True)
        else:
            self._show(self.prompt_history.items[self._position], end=True)

    def _show(self, text: str, *, end: bool) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end if end else (0, len(self.document.get_line(0))))
