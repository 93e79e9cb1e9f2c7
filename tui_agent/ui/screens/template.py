"""Filling a resource template in (``/attach`` of a template): one input per variable, each
suggesting what the server completes for it (``widgets.suggest``: ``completion/complete``,
given what is typed and the variables filled already; ``→`` takes the suggestion).
``enter`` on the last input, or ``ctrl+s``, attaches the resource; ``esc`` gives up."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from tui_agent.tools.resource_tools import fill_template, template_variables
from tui_agent.tools.text import clean
from tui_agent.ui.screens.question import Question
from tui_agent.ui.widgets.messages import key_hints, plain
from tui_agent.ui.widgets.suggest import TAKE_HINT, Complete, ServerSuggester


class TemplateForm(Question[str | None]):
    DEFAULT_CSS = """
    TemplateForm Input { margin: 0 0 1 0; }
    TemplateForm .label { color: $text-muted; }
    """
    BINDINGS = [Binding("ctrl+s", "attach", "Attach"),
                Binding("escape", "give_up", "Close", show=False)]

    def __init__(self, server: str, template: str, complete: Complete) -> None:
        super().__init__()
        self.server, self.template, self.complete = clean(server), clean(template), complete
        self.names = template_variables(self.template)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.assemble("Fill in ", (self.template, "bold"), " from ",
                                          (self.server, "bold")), classes="title")
            with Vertical(id="body"):
                for i, name in enumerate(self.names):
                    yield Static(plain(name), classes="label")
                    yield Input(id=f"var-{i}", placeholder=TAKE_HINT,
                                suggester=ServerSuggester(name, self.complete, self.values))
            yield Static(key_hints([("enter", "next / attach"), ("ctrl+s", "attach"),
                                    ("esc", "close")]), classes="keys")

    def on_mount(self) -> None:
        inputs = self.query(Input)
        if inputs:
            inputs.first().focus()

    def values(self) -> dict[str, str]:
        return {name: self.query_one(f"#var-{i}", Input).value
                for i, name in enumerate(self.names)}

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        at = inputs.index(event.input)
        if at + 1 < len(inputs):
            inputs[at + 1].focus()
        else:
            self.action_attach()

    def action_attach(self) -> None:
        self.dismiss(fill_template(self.template, self.values()))

    def action_give_up(self) -> None:
        self.dismiss(None)
