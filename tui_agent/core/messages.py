"""What the loop adds to the model's messages beyond the conversation itself: the
servers' instructions after the system prompt, and the images tools gave back, as image
parts (a tool message holds text only); and a reply of the model outside the
conversation (:func:`complete_text`, for a server's sampling request)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from typing import Any

from tui_agent.codemode.meta import META_SERVER
from tui_agent.core.calls import Call
from tui_agent.core.events import masked
from tui_agent.core.llm import LLM, ChatModel, Reply
from tui_agent.tools.spec import ToolSource, ToolSpec


def instructions_for(tools: ToolSource, offered: dict[str, ToolSpec], *,
                     code_mode: bool) -> dict[str, str]:
    """The ``instructions`` of the servers whose tools the model has this turn (with code
    mode's meta-tools offered, every server's: a script may call any of them)."""
    given = getattr(tools, "instructions", None)
    if given is None:
        return {}
    servers = {spec.server for spec in offered.values()}
    every = code_mode and META_SERVER in servers
    return {name: text for name, text in given().items() if every or name in servers}


def sentence(text: str) -> str:
    """``text`` ending as a sentence does (a full stop added unless it has one)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?…" else f"{text}."


def system_text(prompt: str | None, instructions: dict[str, str]) -> str | None:
    """The system prompt, then each server's instructions under its name."""
    if not instructions:
        return prompt
    block = "\n\n".join(f"## {name}\n{text}" for name, text in sorted(instructions.items()))
    said = ("The MCP servers whose tools you have say this about using them (their own "
            f"words; follow them where they do not conflict with the above):\n\n{block}")
    return f"{prompt}\n\n{said}" if prompt else said


AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
                 "audio/mpeg": "mp3", "audio/mp3": "mp3"}
"""The sounds a model takes as ``input_audio`` parts (others are only named)."""


def media_message(calls: Sequence[Call], kinds: frozenset[str] = frozenset({"image"})
                  ) -> dict[str, Any] | None:
    """The images (and sounds, if ``kinds`` has ``audio``) the calls gave back, as one user
    message of parts after their results (a tool message holds text only); None when
    there are none."""
    parts: list[dict[str, Any]] = []
    named: list[str] = []
    for call in calls:
        found = [part for m in (call.outcome.media if call.outcome else ())
                 if m.kind in kinds and (part := _part(m.kind, m.mime, m.data)) is not None]
        if found:
            named.append(f"{call.request.name} ({len(found)})")
            parts += found
    if not parts:
        return None
    text = f"The images and sounds the tool calls above returned: {', '.join(named)}."
    return {"role": "user", "content": [{"type": "text", "text": text}, *parts]}


def _part(kind: str, mime: str, data: str) -> dict[str, Any] | None:
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
    audio_format = AUDIO_FORMATS.get(mime.lower())
    if audio_format is None:
        return None
    return {"type": "input_audio", "input_audio": {"data": data, "format": audio_format}}


async def complete(model: ChatModel, messages: Sequence[dict[str, Any]],
                   secrets: frozenset[str] = frozenset(), *, reasoning: bool = True) -> Reply:
    """One whole reply of ``model`` to ``messages``, without tools (empty if none came).
    ``secrets`` (the config's) and the OAuth tokens learned are masked in what is sent: a
    server's sampling request comes here, and may echo what the server was given.
    ``reasoning=False`` asks litellm's client not to think (other models, the demo's and
    scripted ones, think only when scripted to)."""
    reply = Reply()
    sent = [masked(message, secrets) for message in messages]
    stream = model.stream(sent, (), reasoning=False) if not reasoning and isinstance(
        model, LLM) else model.stream(sent, ())
    async with aclosing(stream) as stream:
        async for item in stream:
            if isinstance(item, Reply):
                reply = item
    return reply


async def complete_text(model: ChatModel, messages: Sequence[dict[str, Any]],
                        secrets: frozenset[str] = frozenset()) -> str:
    """One reply of ``model`` to ``messages``, without tools: its text (``secrets`` as
    :func:`complete` masks them)."""
    return (await complete(model, messages, secrets)).text
