"""The events a turn yields. The TUI renders them; ``--output jsonl`` prints them.

They are frozen dataclasses; ``to_json()`` gives the one-line wire form whose
``type`` names the event (DESIGN.md's headless contract). Consumers must skip
types they do not know: new ones may be added.
"""

from tui_agent.core.events.kinds import (
    AgentFinished,
    AgentStarted,
    AgentStatus,
    AgentTag,
    ApprovalDecided,
    Compacted,
    ContextSize,
    Decision,
    ErrorOccurred,
    Event,
    InitDone,
    Notice,
    ReasoningDelta,
    Retrying,
    RoundUsage,
    ServerLog,
    SessionStarted,
    SkillUsed,
    StopReason,
    TaskUpdate,
    TextDelta,
    ToolCallStarted,
    ToolProgress,
    ToolResult,
    TurnDone,
    Usage,
)
from tui_agent.core.events.masking import EventMasker, masked

__all__ = [
    "AgentFinished",
    "AgentStarted",
    "AgentStatus",
    "AgentTag",
    "ApprovalDecided",
    "Compacted",
    "ContextSize",
    "RoundUsage",
    "Decision",
    "ErrorOccurred",
    "Event",
    "EventMasker",
    "InitDone",
    "Notice",
    "ReasoningDelta",
    "Retrying",
    "ServerLog",
    "SessionStarted",
    "SkillUsed",
    "StopReason",
    "TaskUpdate",
    "TextDelta",
    "ToolCallStarted",
    "ToolProgress",
    "ToolResult",
    "TurnDone",
    "Usage",
    "masked",
]
