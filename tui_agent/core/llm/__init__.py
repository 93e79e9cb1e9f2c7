"""The model layer: the only package that reaches litellm (through :mod:`.loader`).

:class:`~tui_agent.core.llm.client.LLM` streams one model configuration's replies;
:mod:`.reply` holds what a reply becomes, :mod:`.errors` how a request failed.
"""

from __future__ import annotations

from tui_agent.core.llm.client import LLM, NO_MODEL_HELP, ChatModel, Streamed
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.llm.loader import load_litellm, preload
from tui_agent.core.llm.reply import Reply, StreamCut, ToolCallRequest, billed, rough_count

__all__ = ["LLM", "NO_MODEL_HELP", "ChatModel", "LLMError", "Reply", "StreamCut", "Streamed",
           "ToolCallRequest", "billed", "load_litellm", "preload", "rough_count"]
