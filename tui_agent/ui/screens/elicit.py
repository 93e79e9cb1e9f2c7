"""What a server asks the person, in the middle of a call (MCP elicitation).

The form: one input per field of the server's schema (text with its format or length,
numbers with their bounds, a checkbox, a single or multiple choice), the schema's defaults
filled in, the required ones marked; ``ctrl+s`` sends (each problem is shown under its
field, and nothing is sent while there is one) · ``ctrl+d`` declines · ``esc`` cancels.

The link: the server, why it asks, and the URL in full; ``o`` opens it in the browser and
tells the server so · ``n`` declines · ``esc`` cancels. Nothing opens by itself.

Everything shown came from the server: cleaned already, and shown as inert text.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Checkbox, Input, Select, SelectionList, Static

from tui_agent.tools.elicit import Answer, Field, Form, UrlAsk, Value, problems, read
from tui_agent.ui.screens.question import Question
from tui_agent.ui.widgets.messages import key_hints, plain


class ElicitScreen(Question[Answer]):
    DEFAULT_CSS = """
    ElicitScreen #body { max-height: 30; padding: 0 1; }
    ElicitScreen .field { margin: 1 0 0 0; text-style: bold; }
    ElicitScreen .hint { color: $text-muted; }
    ElicitScreen .problem { color: $error; display: none; }
    ElicitScreen .problem.-shown { display: block; }
    ElicitScreen Input, ElicitScreen Select { width: 100%; margin: 0 0 0 2; }
    ElicitScreen Input { background: $primary 15%; }
    ElicitScreen Input:focus { background: $primary 30%; }
    ElicitScreen SelectionList { height: auto; max-height: 8; }
    """

    BINDINGS = [
        Binding("ctrl+s", "send", "Send"),
        Binding("ctrl+d", "decline", "Decline"),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    def __init__(self, form: Form) -> None:
        super().__init__()
        self.form = form

    def compose(self) -> ComposeResult:
        form = self.form
        with Vertical(id="dialog"):
            yield Static(Content.assemble((form.server, "bold"), " asks for your input"),
                         classes="title")
            yield Static(plain(form.message or "(no message)"), classes="why")
            with VerticalScroll(id="body"):
                for i, f in enumerate(form.fields):
                    yield from _inputs(i, f)
            yield Static(key_hints([("ctrl+s", "send"), ("ctrl+d", "decline"),
                                    ("esc", "cancel")]), classes="keys")

    def on_mount(self) -> None:
        first = self.query("#body Input, #body Select, #body Checkbox, #body SelectionList")
        (first.first() if first else self.query_one("#body")).focus()

    def values(self) -> tuple[dict[str, Value], dict[str, str]]:
        """What the person entered, and what does not read as its field's type."""
        content: dict[str, Value] = {}
        unread: dict[str, str] = {}
        for i, f in enumerate(self.form.fields):
            widget = self.query_one(f"#field-{i}")
            if isinstance(widget, Checkbox):
                content[f.name] = widget.value
            elif isinstance(widget, Select):
                content[f.name] = None if widget.is_blank() else str(widget.value)
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
        for i, f in enumerate(self.form.fields):
            shown = self.query_one(f"#problem-{i}", Static)
            shown.update(plain(wrong.get(f.name, "")))
            shown.set_class(f.name in wrong, "-shown")
        if not wrong:
            self.dismiss(Answer("accept", {k: v for k, v in content.items() if v is not None}))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_send()

    def action_decline(self) -> None:
        self.dismiss(Answer("decline"))

    def action_cancel(self) -> None:
        self.dismiss(Answer("cancel"))


def _inputs(i: int, f: Field) -> ComposeResult:
    """The label, hint, input and problem line of field ``f``."""
    label = f.title + (" *" if f.required else "")
    if f.kind != "boolean":  # a checkbox carries its label
        yield Static(plain(label), classes="field")
    hint = " · ".join(part for part in (f.description, _bounds(f)) if part)
    if hint:
        yield Static(plain(hint), classes="hint")
    if f.kind == "boolean":
        yield Checkbox(plain(label), value=f.default is True, id=f"field-{i}", compact=True,
                       classes="field")
    elif f.kind == "choice":
        yield Select([(label, value) for value, label in f.options], id=f"field-{i}",
                     allow_blank=not f.required or f.default is None,
                     value=f.default if isinstance(f.default, str) else Select.BLANK,
                     prompt="(choose one)", compact=True)
    elif f.kind == "choices":
        chosen = f.default if isinstance(f.default, list) else []
        yield SelectionList[str](*[(label, value, value in chosen)
                                   for value, label in f.options], id=f"field-{i}")
    else:
        shown = "" if f.default is None else str(f.default)
        yield Input(shown, placeholder=_placeholder(f), id=f"field-{i}", compact=True,
                    type="integer" if f.kind == "integer" else
                    "number" if f.kind == "number" else "text")
    yield Static("", classes="problem", id=f"problem-{i}")


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
    if f.kind == "choices":
        return "space picks; several may be picked"
    return ""


def _placeholder(f: Field) -> str:
    return {"email": "name@example.com", "uri": "https://...", "date": "YYYY-MM-DD",
            "date-time": "YYYY-MM-DDTHH:MM:SS"}.get(f.format or "", "")


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
