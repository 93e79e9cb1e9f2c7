"""The arguments of a server's prompt, asked for in a form before the prompt is used: one
text field per argument of the prompt's definition, with what it is for, the required ones
starred, the ones already given filled in, the first missing one focused. ``ctrl+s`` (or
enter) uses the prompt · ``esc`` gives up. Opened when ``/SERVER:PROMPT`` lacks a required
argument, and from the command palette for a prompt that takes any. Where the server
completes the prompt's arguments (``completion/complete``), each field suggests as it is
typed, given the others filled, and ``→`` takes the suggestion, as in the resource
template form."""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content
from textual.widget import Widget

from tui_agent.tools.elicit import Field, Form
from tui_agent.tools.prompts import PromptInfo
from tui_agent.ui.screens.form import FormScreen
from tui_agent.ui.widgets.suggest import Complete


class PromptArguments(FormScreen):
    ACTIONS = (("send", "Use the prompt", "ctrl+s", "use it"),
               ("cancel", "Cancel", "esc", "cancel"))

    def __init__(self, prompt: PromptInfo, given: Mapping[str, str],
                 complete: Complete | None = None) -> None:
        fields = tuple(Field(a.name, "string", a.name, a.description, a.required,
                             given.get(a.name) or None) for a in prompt.arguments)
        super().__init__(Form(prompt.server, prompt.description or "(no description)", fields),
                         complete)
        self.prompt = prompt

    def opening_focus(self) -> Widget:
        """The first required argument not given yet, else the first."""
        for i, f in enumerate(self.form.fields):
            if f.required and f.default is None:
                return self.query_one(f"#field-{i}")
        return super().opening_focus()

    def heading(self) -> Content:
        return Content.assemble("Arguments for the prompt ", (self.prompt.ref, "bold"))
