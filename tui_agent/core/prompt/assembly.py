"""The system prompt of one conversation, assembled from its parts in a stable order, so
the provider's prompt cache keeps hitting: what never changes first, what changes most
last. The parts:

1. tui-agent's own (:data:`~tui_agent.core.prompt.parts.OWN`), or ``[model]
   system_prompt`` in its place; then ``[model] append_system_prompt``;
2. the environment (date, working directory, platform, git);
3. project memory (``AGENTS.md`` and its kin, read by :mod:`tui_agent.custom.memory`,
   re-read off the event loop at each turn's start only when a file changed);
4. the skills index (:attr:`SystemPrompt.skills_index`, set by whoever lists skills);
5. the instructions of the servers whose tools the model has this turn.

The bytes sent are the same from one request to the next unless a part's text changed.
``/context`` shows :meth:`SystemPrompt.parts` with each part's tokens.
"""

from __future__ import annotations

import asyncio

from tui_agent.core.prompt.parts import (
    OWN,
    Environment,
    PromptPart,
    memory_said,
    servers_said,
)
from tui_agent.custom.memory import Memory, MemoryReader


class SystemPrompt:
    """The parts of one conversation's system prompt, and the memory behind one of them.

    ``own`` is tui-agent's own part (None: none, as an :class:`~tui_agent.core.agent.Agent`
    made without one has); ``replacement`` (``[model] system_prompt``) stands in its
    place."""

    def __init__(self, *, own: str | None = OWN, replacement: str | None = None,
                 append: str | None = None, environment: Environment | None = None,
                 memory: MemoryReader | None = None, skills_index: str | None = None
                 ) -> None:
        self.own = own
        self.replacement = replacement
        self.append = append
        self.environment = environment
        self.memory_reader = memory
        self.skills_index = skills_index
        """The skills' names and descriptions (None: no skills); sent after memory."""
        self.memory = Memory()
        """The memory as last read (:meth:`refresh`)."""
        self._told: set[str] = set()

    async def refresh(self) -> list[str]:
        """Read the memory files again if one changed (in a thread: a slow disk never
        holds the event loop); the problems not told before, to tell once."""
        if self.memory_reader is None:
            return []
        self.memory = await asyncio.to_thread(self.memory_reader.read)
        new = [str(p) for p in self.memory.problems if str(p) not in self._told]
        self._told.update(new)
        return new

    def parts(self, instructions: dict[str, str] | None = None) -> list[PromptPart]:
        """The parts in the order sent, each with its text (empty parts left out)."""
        head = self.replacement if self.replacement is not None else self.own
        found = [PromptPart("system_prompt" if self.replacement is not None else "tui-agent",
                            head or ""),
                 PromptPart("append_system_prompt", self.append or ""),
                 PromptPart("environment",
                            self.environment.text() if self.environment else ""),
                 PromptPart("memory", memory_said(text) if (text := self.memory.text())
                            else ""),
                 PromptPart("skills", self.skills_index or ""),
                 PromptPart("server instructions",
                            servers_said(instructions) if instructions else "")]
        return [part for part in found if part.text.strip()]

    def text(self, instructions: dict[str, str] | None = None) -> str | None:
        """The system message's text (None when every part is empty)."""
        return "\n\n".join(p.text for p in self.parts(instructions)) or None
