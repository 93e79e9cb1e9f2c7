"""Message chunks with their message ids, and tui-agent's own words.

ACP v1 lets each ``*_message_chunk``/``agent_thought_chunk`` carry a ``messageId``: chunks
of one message share it, a new id starts a new message. A model's reply is one message
(its thinking another), until a tool call: the reply after the results is a new message.

What tui-agent itself says (a notice, an error, a command's answer, the trust notice) is
an agent message of its own, marked in ``_meta`` (``{"tuiAgent": {"kind": ...}}``), never
thinking: an editor shows it as the agent's words, and one that reads the mark can style
it as a note. The model's thinking stays ``agent_thought_chunk``.
"""

from __future__ import annotations

import uuid
from typing import Literal

from acp.helpers import text_block
from acp.schema import AgentMessageChunk, AgentThoughtChunk, UserMessageChunk

OWN = "tuiAgent"
"""The ``_meta`` key marking tui-agent's own words."""
OwnKind = Literal["notice", "error", "command"]


def new_id() -> str:
    return str(uuid.uuid4())


def agent_text(text: str, message_id: str | None = None) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text),
                             message_id=message_id)


def thought_text(text: str, message_id: str | None = None) -> AgentThoughtChunk:
    return AgentThoughtChunk(session_update="agent_thought_chunk", content=text_block(text),
                             message_id=message_id)


def user_text(text: str, message_id: str | None = None) -> UserMessageChunk:
    return UserMessageChunk(session_update="user_message_chunk", content=text_block(text),
                            message_id=message_id)


def own_text(text: str, kind: OwnKind = "notice") -> AgentMessageChunk:
    """tui-agent's own words: a message of their own, marked as tui-agent's."""
    return AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text),
                             message_id=new_id(), field_meta={OWN: {"kind": kind}})


class MessageIds:
    """The ids of the reply and the thinking being streamed: each stays while its message
    goes on, and is replaced once a tool call ends it."""

    def __init__(self) -> None:
        self._reply: str | None = None
        self._thought: str | None = None

    def reply(self) -> str:
        self._reply = self._reply or new_id()
        return self._reply

    def thought(self) -> str:
        self._thought = self._thought or new_id()
        return self._thought

    def end(self) -> None:
        """The model's message ended (a tool call, a notice between): the next chunk is a
        new message."""
        self._reply = self._thought = None

