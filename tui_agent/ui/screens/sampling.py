"""A server's request for the model (MCP sampling), in two looks. First the request: the
server, its system prompt and its messages, the last one editable; ``ctrl+s`` runs it on
the model · ``esc`` declines. Then the model's reply: ``y`` sends it to the server · ``n``
or ``esc`` does not send it (the server is told the person declined).

Everything shown came from the server or the model: cleaned (again, here) and shown as
inert text.
"""

from __future__ import annotations

from dataclasses import replace

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static, TextArea

from tui_agent.tools.sampling import SampleRequest
from tui_agent.tools.text import clean
from tui_agent.ui.screens.question import Question
from tui_agent.ui.widgets.messages import key_hints, plain


class SamplingScreen(Question[SampleRequest | None]):
    DEFAULT_CSS = """
    SamplingScreen .label { color: $text-muted; text-style: italic; }
    SamplingScreen TextArea { height: auto; max-height: 8; }
    """

    BINDINGS = [
        Binding("ctrl+s", "run", "Run on the model"),
        Binding("escape", "deny", "Decline", show=False),
    ]

    def __init__(self, request: SampleRequest, model: str | None) -> None:
        super().__init__()
        self.request = replace(
            request, server=clean(request.server),
            system_prompt=clean(request.system_prompt) if request.system_prompt else None,
            messages=tuple((clean(role), clean(text)) for role, text in request.messages))
        self.model = model

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="dialog"):
            yield Static(Content.assemble((request.server, "bold"), " asks the model to write",
                                          f" (up to {request.max_tokens:,} tokens)"),
                         classes="title")
            yield Static(plain(f"It would run on {self.model or 'the chat model'}; nothing "
                               "goes back to the server until you have seen the reply."),
                         classes="why")
            with VerticalScroll(id="body"):
                yield Static("system prompt", classes="label")
                yield Static(plain(request.system_prompt or "(none)"))
                for role, text in request.messages[:-1]:
                    yield Static(role, classes="label")
                    yield Static(plain(text))
            if request.messages:
                role, text = request.messages[-1]
                yield Static(f"{role} (you may edit it)", classes="label")
                yield TextArea(text, id="last", soft_wrap=True)
            yield Static(key_hints([("ctrl+s", "run it on the model"), ("esc", "decline")]),
                         classes="keys")

    def opening_focus(self) -> Widget:
        areas = self.query("#last")
        return areas.first() if areas else self.query_one("#body")

    def action_run(self) -> None:
        messages = self.request.messages
        if messages:
            role, _ = messages[-1]
            edited = self.query_one("#last", TextArea).text
            messages = (*messages[:-1], (role, edited))
        self.dismiss(replace(self.request, messages=messages))

    def action_deny(self) -> None:
        self.dismiss(None)


class SampledReply(Question[bool]):
    BINDINGS = [
        Binding("y", "send", "Send it to the server"),
        Binding("n", "hold_back", "Don't send"),
        Binding("escape", "hold_back", "Don't send", show=False),
    ]

    def __init__(self, request: SampleRequest, reply: str) -> None:
        super().__init__()
        self.request, self.reply = replace(request, server=clean(request.server)), clean(reply)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.assemble("The model's reply to ", (self.request.server, "bold")),
                         classes="title")
            yield Static(plain("Send it back to the server?"), classes="why")
            with VerticalScroll(id="body"):
                yield Static(plain(self.reply or "(empty)"))
            yield Static(key_hints([("y", "send it to the server"), ("n", "don't send"),
                                    ("esc", "don't send")]), classes="keys")

    def action_send(self) -> None:
        self.dismiss(True)

    def action_hold_back(self) -> None:
        self.dismiss(False)
