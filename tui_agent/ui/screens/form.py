"""A form in a modal: one input per :class:`~tui_agent.tools.elicit.Field` (text with its
format or length, numbers with their bounds, a checkbox, a single or multiple choice, each
choice a list in the form itself), the defaults filled in, the required ones starred, each
problem shown under its field.

Its parts: a head (the title and why it asks), the fields, and a row of actions (buttons
and their keys). The head and the actions are docked, so however many fields there are and
however small the terminal, the fields scroll between them and the way to send the form
stays in sight; a long message scrolls in the head, which takes a third of the screen at
most. The first field has the focus when the form opens.

What a server asks (``elicit.ElicitScreen``) and a prompt's missing arguments
(``prompt_args.PromptArguments``) are such forms. Everything shown came from a server:
cleaned already, and shown as inert text.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    RadioButton,
    RadioSet,
    SelectionList,
    Static,
)

from tui_agent.tools.elicit import Answer, Field, Form, Value, problems, read
from tui_agent.ui.screens.question import Question
from tui_agent.ui.widgets.messages import key_hints, plain
from tui_agent.ui.widgets.suggest import TAKE_HINT, Complete, ServerSuggester

Action = tuple[str, str, str, str]
"""``(action, button label, key, what the key does)`` of one way out of the form."""


class FormScreen(Question[Answer]):
    """A form: ``ctrl+s`` (or enter in a text field) sends it, once every field reads
    right; ``esc`` cancels. Subclasses name the heading and add their own actions."""

    DEFAULT_CSS = """
    /* The head and the actions are docked: 1fr is the room left between them, so the
       body is as tall as its fields up to that, and scrolls beyond. */
    FormScreen #head { dock: top; height: auto; max-height: 35vh; }
    FormScreen #body { height: auto; max-height: 1fr; padding: 0 1; }
    FormScreen #actions { dock: bottom; height: auto; }
    FormScreen #actions Button { width: auto; min-width: 6; margin: 0 1 0 0; }
    FormScreen #actions .keys { width: 1fr; margin: 0 0 0 1; }
    FormScreen .field { margin: 1 0 0 0; text-style: bold; }
    FormScreen .hint { color: $text-muted; }
    FormScreen .problem { color: $error; display: none; }
    FormScreen .problem.-shown { display: block; }
    FormScreen Input { width: 100%; margin: 0 0 0 2; }
    FormScreen Input { background: $primary 15%; }
    FormScreen Input:focus { background: $primary 30%; }
    /* The choices are lists inside the body, which scrolls: a dropdown would draw over
       the buttons below it (and past the dialog). A long list scrolls in its own room. */
    FormScreen SelectionList { height: auto; max-height: 8; }
    FormScreen RadioSet { height: auto; max-height: 8; margin: 0 0 0 2; }
    """

    BINDINGS = [
        Binding("ctrl+s", "send", "Send"),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    ACTIONS: tuple[Action, ...] = (("send", "Send", "ctrl+s", "send"),
                                   ("cancel", "Cancel", "esc", "cancel"))
    """The buttons, in order, and the keys that do the same."""

    def __init__(self, form: Form, complete: Complete | None = None) -> None:
        """``complete``: the server's suggestions for the text fields (a prompt's
        arguments), where it completes them; ``→`` takes one."""
        super().__init__()
        self.form, self.complete = form, complete

    def heading(self) -> Content:
        return Content.assemble((self.form.server, "bold"), " asks for your input")

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with VerticalScroll(id="head"):
                yield Static(self.heading(), classes="title")
                yield Static(plain(self.form.message or "(no message)"), classes="why")
            with VerticalScroll(id="body"):
                for i, f in enumerate(self.form.fields):
                    yield from _inputs(i, f, self._suggester(f))
            with Horizontal(id="actions"):
                for action, label, _, _ in self.ACTIONS:
                    yield Button(label, id=f"do-{action}", compact=True,
                                 variant="primary" if action == "send" else "default")
                yield Static(key_hints([(key, what) for _, _, key, what in self.ACTIONS],
                                       compact=True), classes="keys")

    def _suggester(self, f: Field) -> ServerSuggester | None:
        if self.complete is None or f.kind != "string":
            return None
        return ServerSuggester(f.name, self.complete, self.typed)

    def typed(self) -> dict[str, str]:
        """The text of each text field, as typed (what a server completes with)."""
        return {f.name: widget.value for i, f in enumerate(self.form.fields)
                if isinstance(widget := self.query_one(f"#field-{i}"), Input)}

    def opening_focus(self) -> Widget:
        fields = self.query("#body Input, #body RadioSet, #body Checkbox, #body SelectionList")
        return fields.first() if fields else self.query_one("#body")

    def values(self) -> tuple[dict[str, Value], dict[str, str]]:
        """What the person entered, and what does not read as its field's type."""
        content: dict[str, Value] = {}
        unread: dict[str, str] = {}
        for i, f in enumerate(self.form.fields):
            widget = self.query_one(f"#field-{i}")
            if isinstance(widget, Checkbox):
                content[f.name] = widget.value
            elif isinstance(widget, RadioSet):
                content[f.name] = _picked(f, widget.pressed_index)
            elif isinstance(widget, SelectionList):
                content[f.name] = [str(v) for v in widget.selected]
            elif isinstance(widget, Input):
                try:
                    content[f.name] = read(f, widget.value)
                except ValueError as exc:
                    unread[f.name] = str(exc)
        return content, unread

    def action_send(self) -> None:
        content, unread = self.values()
        wrong = {**problems(self.form, content), **unread}
        first_wrong: Widget | None = None
        for i, f in enumerate(self.form.fields):
            shown = self.query_one(f"#problem-{i}", Static)
            shown.update(plain(wrong.get(f.name, "")))
            shown.set_class(f.name in wrong, "-shown")
            if f.name in wrong and first_wrong is None:
                first_wrong = self.query_one(f"#field-{i}")
        if first_wrong is not None:  # below the fold, perhaps: bring it into sight
            first_wrong.focus()
            return
        self.dismiss(Answer("accept", {k: v for k, v in content.items() if v is not None}))

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = (event.button.id or "").removeprefix("do-")
        await self.run_action(action)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_send()

    def action_cancel(self) -> None:
        self.dismiss(Answer("cancel"))


def _inputs(i: int, f: Field, suggester: ServerSuggester | None = None) -> ComposeResult:
    """The label, hint, input and problem line of field ``f``; a text input suggests with
    ``suggester``, if given."""
    label = f.title + (" *" if f.required else "")
    hint = " · ".join(part for part in (f.description, _bounds(f)) if part)
    if f.kind == "boolean":  # a checkbox carries its label; what it means goes under it
        yield Checkbox(plain(label), value=f.default is True, id=f"field-{i}", compact=True,
                       classes="field")
        if hint:
            yield Static(plain(hint), classes="hint")
        yield Static("", classes="problem", id=f"problem-{i}")
        return
    yield Static(plain(label), classes="field")
    if hint:
        yield Static(plain(hint), classes="hint")
    if f.kind == "choice":
        blank = [] if f.required else [RadioButton(NONE, f.default is None, compact=True)]
        yield RadioSet(*blank, *[RadioButton(plain(label), value == f.default, compact=True)
                                 for value, label in f.options], id=f"field-{i}", compact=True)
    elif f.kind == "choices":
        chosen = f.default if isinstance(f.default, list) else []
        yield SelectionList[str](*[(label, value, value in chosen)
                                   for value, label in f.options], id=f"field-{i}")
    else:
        shown = "" if f.default is None else str(f.default)
        yield Input(shown, placeholder=_placeholder(f) or (TAKE_HINT if suggester else ""),
                    suggester=suggester, id=f"field-{i}", compact=True,
                    type="integer" if f.kind == "integer" else
                    "number" if f.kind == "number" else "text")
    yield Static("", classes="problem", id=f"problem-{i}")


NONE = "(none)"
"""The first choice of a single choice that is not required: none of the others."""


def _picked(f: Field, index: int) -> str | None:
    """The value of the ``index``-th button of choice field ``f`` (-1: none pressed)."""
    index -= 0 if f.required else 1  # the (none) button
    return f.options[index][0] if 0 <= index < len(f.options) else None


def _bounds(f: Field) -> str:
    if f.kind in ("number", "integer"):
        if f.minimum is not None and f.maximum is not None:
            return f"from {f.minimum:g} to {f.maximum:g}"
        if f.minimum is not None:
            return f"at least {f.minimum:g}"
        if f.maximum is not None:
            return f"at most {f.maximum:g}"
    if f.kind == "string" and f.min_length and f.max_length:
        return f"{f.min_length} to {f.max_length} characters"
    if f.kind == "string" and (f.min_length or f.max_length):
        return f"at least {f.min_length} characters" if f.min_length else \
            f"at most {f.max_length} characters"
    if f.kind == "choice":
        return "space picks one"
    if f.kind == "choices":
        return "space picks; several may be picked"
    return ""


def _placeholder(f: Field) -> str:
    return {"email": "name@example.com", "uri": "https://...", "date": "YYYY-MM-DD",
            "date-time": "YYYY-MM-DDTHH:MM:SS"}.get(f.format or "", "")
