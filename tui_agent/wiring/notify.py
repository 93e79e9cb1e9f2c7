"""The app's ways of asking the person, each starting the ``Notification`` hooks as it
asks (Claude Code's ``notification_type``: ``permission_prompt`` is the gate's own, in
the agent; here ``elicitation_dialog`` for a server's form or link, and
``sampling_request`` for a server asking to use the model). The hooks are not waited for:
the person is being asked meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tui_agent.core.agent import Agent
from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from tui_agent.tools.elicit import Answer, Ask, Form, UrlAsk
    from tui_agent.tools.sampling import Review, SampleRequest


def notifying_ask(ask: Ask | None, agent: Callable[[], Agent]) -> Ask | None:
    """``ask`` (a form or a link put to the person), firing ``Notification`` first."""
    if ask is None:
        return None
    shown = ask

    async def asking(form: Form | UrlAsk) -> Answer:
        agent().fire_and_forget("Notification", {
            "message": clean(f"{form.server} asks for your input: {form.message}"),
            "notification_type": "elicitation_dialog"})
        return await shown(form)

    return asking


def notifying_review(review: Review, agent: Callable[[], Agent]) -> Review:
    """``review`` (a server's sampling request put to the person), firing
    ``Notification`` first."""

    async def reviewed(request: SampleRequest) -> SampleRequest | None:
        agent().fire_and_forget("Notification", {
            "message": clean(f"{request.server} asks to use the model (sampling)"),
            "notification_type": "sampling_request"})
        return await review(request)

    return reviewed
