"""A saved conversation as the transcript's widgets: the user's messages, the replies with
their thinking, and a card for each tool call that ends as it ended live.

How a call ended comes from the session file (:class:`~tui_agent.core.session.SavedCall`:
failed, denied with its reason, cancelled, its duration, a script's own calls nested under
its card). A file written before tui-agent kept that has only the result's words: its
cards are guessed from them (``error:``, ``The user denied``, ``cancelled by the user``).
A call that started a sub-agent (its record has ``agent``, a
:class:`~tui_agent.core.session.SavedAgent`) is an agent card with the ending it had,
whose transcript is read from its own session file the first time it is unfolded.
The transcript (``transcript.py``) pages these widgets in; this module only builds them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.widget import Widget

from tui_agent.ui.widgets.history import MARKER, arguments, looks_failed, text_of
from tui_agent.ui.widgets.thinking import thinking_of

if TYPE_CHECKING:
    from tui_agent.core.session import SavedAgent, SavedCall
    from tui_agent.ui.widgets.agent_card import AgentCard
    from tui_agent.ui.widgets.tool_card import ToolCard


def saved_widgets(messages: Sequence[dict[str, Any]], calls: Mapping[str, SavedCall],
                  cards: dict[str, ToolCard], source: Path | None = None,
                  secrets: Collection[str] = ()) -> list[Widget]:
    """The widgets of ``messages``; each call's card is added to ``cards`` (by call id),
    where its result, further on, finds it. A call that started a sub-agent is its agent
    card instead, which reads the agent's transcript beside ``source`` (the session file)
    when it is first unfolded (``secrets`` masked in it, as in the conversation)."""
    from tui_agent.core.attachments import split_message
    from tui_agent.core.permissions.modes import without_mode_note
    from tui_agent.ui.widgets.messages import AssistantMessage, CompactedMarker, UserMessage

    out: list[Widget] = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "user":
            out.append(UserMessage(*split_message(without_mode_note(text_of(content)))))
        elif role == "assistant":
            thought = thinking_of(message)
            if thought is not None:
                out.append(thought)
            if text_of(content).strip():
                out.append(AssistantMessage(text_of(content)))
            for call in message.get("tool_calls") or []:
                saved = calls.get(str(call.get("id", "")))
                if saved is not None and saved.agent is not None:
                    out.append(saved_agent(call, saved.agent, source, secrets))
                    continue
                card = saved_card(call)
                cards[card.call_id] = card
                out.append(card)
        elif role == MARKER:
            out.append(CompactedMarker(text_of(content)))
        elif role == "tool" and message.get("tool_call_id") in cards:
            call_id = message["tool_call_id"]
            text = text_of(content)
            cards[call_id].saved_result = (text, calls.get(call_id) or looks_failed(text))
    return out


def saved_card(call: dict[str, Any]) -> ToolCard:
    """The card of a call as the assistant message recorded it (OpenAI format)."""
    from tui_agent.codemode.meta import META, META_SERVER
    from tui_agent.ui.widgets.tool_card import ToolCard

    function = call.get("function") or {}
    server, _, tool = str(function.get("name", "?")).partition("__")
    if not tool and server in META:
        server, tool = META_SERVER, server
    return ToolCard(str(call.get("id", "")), server if tool else "", tool or server,
                    arguments(function.get("arguments")))


def saved_agent(call: dict[str, Any], agent: SavedAgent, source: Path | None,
                secrets: Collection[str] = ()) -> AgentCard:
    """The card of a sub-agent as the session saved it: how it ended, its totals, and its
    transcript on demand."""
    from tui_agent.ui.widgets.agent_card import AgentCard

    function = call.get("function") or {}
    task = arguments(function.get("arguments")).get("prompt")
    card = AgentCard(str(call.get("id", "")), agent.name, agent.model,
                     task if isinstance(task, str) else "")
    card.restore(agent.status, agent.usage, agent.duration, agent.turns, agent.tools,
                 agent.reason)
    if source is not None:
        card.loader = transcript_loader(source, agent, secrets)
    return card


def transcript_loader(source: Path, agent: SavedAgent, secrets: Collection[str]
                      ) -> Callable[[AgentCard], Awaitable[None]]:
    """What fills a resumed agent card once unfolded: the sub-agent's conversation, read
    off the UI thread from its file beside ``source``, its own sub-agents as cards too."""

    async def load(card: AgentCard) -> None:
        import asyncio

        from tui_agent.core.session import agent_transcript
        from tui_agent.ui.widgets.messages import Note

        conv = await asyncio.to_thread(agent_transcript, source, agent, secrets)
        if conv is None:
            where = f"could not be read ({source.parent / agent.file})" if agent.file \
                else "was not saved"
            await card.body.mount(Note(f"its transcript {where}", "warning"))
            return
        widgets = saved_widgets(conv.messages, conv.calls, {}, conv.path, secrets)
        await card.body.mount_all(widgets or [Note("(its transcript is empty)")])
    return load
