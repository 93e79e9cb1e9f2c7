"""A modal list to choose from, filtered as you type: models, sessions, themes, resources.

With ``free_text`` the typed text itself can be chosen (``/model`` takes any
litellm string, not only the configured ones). :meth:`Picker.describe` adds a dim detail
to choices while the picker is open (the model picker's facts arrive from a worker after
it opens), keeping what was typed and which line is highlighted. :meth:`Picker.suggest`
adds a long catalogue that is searched, not browsed: its entries show only once what is
typed matches them, after the choices (the model picker's: litellm's chat models).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from tui_agent.tools.text import clean


class Picker(ModalScreen[str | None]):
    DEFAULT_CSS = """
    Picker { align: center middle; background: $background 60%; }
    Picker #box {
        width: 80%; max-width: 100; height: auto; max-height: 80%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    Picker .title { text-style: bold; margin: 0 0 1 0; }
    Picker OptionList {
        height: auto; max-height: 20; border: none;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    Picker .hint { color: $text-muted; }
    """
    BOX_SHARE = 0.8
    """The most of the screen's height the box takes (``max-height: 80%`` above)."""
    SUGGESTED = 30
    """The most suggestions shown at once (the first that match)."""
    SUGGEST_FROM = 2
    """How many characters must be typed before suggestions show."""
    LIST_ROWS = 20
    """The most rows the list shows (``max-height: 20`` above), room permitting."""
    BINDINGS = [Binding("escape", "dismiss_none", "Close"),
                Binding("down", "move('cursor_down')", show=False),
                Binding("up", "move('cursor_up')", show=False),
                Binding("pagedown", "move('page_down')", show=False),
                Binding("pageup", "move('page_up')", show=False)]
    """The arrows move the highlight while the filter keeps the keys, as in every fuzzy
    picker: the first down already picks the next row (the list's own bindings win
    when it has the focus, after a tab or a click)."""

    def __init__(self, title: str, choices: Sequence[tuple[str, str]], *,
                 free_text: bool = False, placeholder: str = "type to filter",
                 current: str | None = None, hint: str = "") -> None:
        super().__init__()
        self.title_text, self.choices = title, list(choices)
        self.free_text, self.placeholder, self.current = free_text, placeholder, current
        self.hint = hint
        self.suggestions: list[tuple[str, str]] = []
        """Shown only when what is typed matches them (:meth:`suggest`)."""
        self.details: dict[str, str] = {}
        """A dim line part after a choice's label, by value (:meth:`describe`)."""
        self.browsed = False
        """The arrows moved the highlight since the last key typed: enter takes the
        highlighted row, even with ``free_text``."""

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static(Content(self.title_text), classes="title")
            yield Input(placeholder=self.placeholder, id="filter")
            yield OptionList(*self._options(""), id="options")
            if self.hint:
                yield Static(Content(self.hint), classes="hint")

    async def on_mount(self) -> None:  # async: a subclass's own on_mount is async too
        self._highlight_current()
        self.call_after_refresh(self._fit_list)

    def _highlight_current(self) -> None:
        """Open on the choice in force (``current``), so that enter keeps it and the
        arrows start from it; the first choice when there is none."""
        options = self.query_one(OptionList)
        if self.current is None or not options.option_count:
            return
        with contextlib.suppress(OptionDoesNotExist):
            options.highlighted = options.get_option_index(self.current)
            options.scroll_to_highlight()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_list)

    def _fit_list(self) -> None:
        """Let the list take only the rows the box has left once the title, the input and
        the hint have theirs, so that a long list scrolls inside the box rather than
        pushing its last choices and the hint off the screen."""
        box = self.query_one("#box")
        options = self.query_one(OptionList)
        others = sum(w.outer_size.height + w.styles.margin.height
                     for w in box.children if w is not options)
        room = int(self.size.height * self.BOX_SHARE) - box.styles.gutter.height - others
        options.styles.max_height = max(min(room, self.LIST_ROWS), 3)  # no-op if unchanged

    def _options(self, query: str) -> list[Option]:
        needle = query.lower()

        def matches(value: str, label: str) -> bool:
            return needle in value.lower() or needle in label.lower()

        shown = [c for c in self.choices if matches(*c)]
        if len(needle.strip()) >= self.SUGGEST_FROM:
            offered = {value for value, _ in self.choices}
            found = (c for c in self.suggestions if c[0] not in offered and matches(*c))
            suggested = [c for _, c in zip(range(self.SUGGESTED), found, strict=False)]
        else:
            suggested = []
        width = max((len(clean(label)) for _, label in [*self.choices, *suggested]), default=0)
        out = []
        for value, label in [*shown, *suggested]:
            mark = "● " if value == self.current else "  "
            detail = self.details.get(value)
            text = Content(mark + clean(label))
            if detail:  # in a column after the widest label, dim
                text = Content.assemble(text.pad_right(width - len(clean(label)) + 2),
                                        Content(clean(detail)).stylize("dim"))
            out.append(Option(text, id=value))
        return out

    def describe(self, details: Mapping[str, str]) -> None:
        """Show ``details`` (value -> text, untrusted: cleaned) beside those choices."""
        self.details.update(details)
        self._refresh()

    def offer(self, choices: Sequence[tuple[str, str]]) -> None:
        """Add ``choices`` (those not offered yet) after the others, keeping what was typed
        and the highlighted line: for choices learnt after the picker opened."""
        known = {value for value, _ in self.choices}
        self.choices.extend(c for c in choices if c[0] not in known)
        self._refresh()

    def suggest(self, choices: Sequence[tuple[str, str]]) -> None:
        """Search ``choices`` too (value, label) as the person types: shown after the
        choices once :data:`SUGGEST_FROM` characters are typed, the first
        :data:`SUGGESTED` that match."""
        self.suggestions = list(choices)
        self._refresh()

    def _refresh(self) -> None:
        if not self.is_mounted:
            return
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        options.clear_options()
        options.add_options(self._options(self.query_one(Input).value))
        if highlighted is not None and options.option_count:
            options.highlighted = min(highlighted, options.option_count - 1)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.browsed = False
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options(event.value))
        if options.option_count:
            options.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter takes the typed text itself when free text is allowed and the arrows
        have not moved since the last key typed, else the highlighted choice."""
        event.stop()
        typed = event.value.strip()
        if self.free_text and typed and not self.browsed:
            self.dismiss(typed)
            return
        options = self.query_one(OptionList)
        if options.option_count:
            options.highlighted = options.highlighted or 0
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_move(self, step: str) -> None:
        """Move the list's highlight by ``step`` (one of OptionList's cursor actions),
        leaving the focus in the filter."""
        options = self.query_one(OptionList)
        if not options.option_count:
            return
        getattr(options, f"action_{step}")()
        self.browsed = True

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
