"""Agent files: markdown with a YAML frontmatter that define the sub-agents the built-in
``agent`` tool can start, read the way Claude Code reads its ``.claude/agents/*.md`` so a
user's existing files work unchanged.

Where: the user's ``agents/`` folder beside the config file and ``~/.claude/agents/``; in a
trusted project, ``.tui-agent/agents/`` and ``.claude/agents/`` at the project's root.
The frontmatter gives ``name``, ``description``, ``model``, ``tools``,
``reasoning_effort`` and ``max_turns``; the body is the agent's system prompt.

This module holds the data the rest of the program reads; :mod:`.reader` finds and reads
the files (:func:`~.reader.discover`, :func:`~.reader.load`), :mod:`.tool_names` reads
their ``tools`` and ``disallowedTools`` (Claude Code's tool names made ours).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AgentDef:
    """One agent the ``agent`` tool can start.

    ``model``: a litellm model string (``[models."NAME"]`` settings apply), or None for
    the parent's model (``inherit``). ``tools``: globs over tool names, as the model sees
    them (``time__get_current_time``) or as rules name them
    (``mcp__time__get_current_time``); None: every tool the parent has. ``origin``:
    ``builtin``, ``user`` or ``project``; ``file``/``line``: where it is defined (None
    for the built-in general agent)."""

    name: str
    description: str
    prompt: str
    origin: str
    model: str | None = None
    tools: tuple[str, ...] | None = None
    reasoning_effort: str | None = None
    max_turns: int | None = None
    file: Path | None = None
    line: int = 1
    disallowed: tuple[str, ...] = ()
    """Globs (as ``tools``) of tools it never gets, even those ``tools`` names
    (``disallowedTools``)."""


@dataclass(frozen=True)
class AgentProblem:
    """An agent file that could not be used (or a name that lost a clash): what was wrong
    and where."""

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"
