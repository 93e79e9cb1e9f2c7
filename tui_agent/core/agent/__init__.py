"""The chat loop (:mod:`~tui_agent.core.agent.loop`) and the tool calls between its
rounds (:mod:`~tui_agent.core.agent.running`)."""

from tui_agent.core.agent.loop import Agent as Agent
