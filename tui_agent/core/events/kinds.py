"""The event types a turn yields (see the package's docstring), the usage they carry, and
the tag of the sub-agent an event comes from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal

from tui_agent.tools.wording import counted

Decision = Literal["approved", "denied", "auto"]
StopReason = Literal["end", "max_tokens", "refusal", "max_depth", "error", "cancelled"]
"""How a turn ended: ``end`` the model was done; ``max_tokens`` its last reply hit the
output-token limit (cut short); ``refusal`` the provider stopped it (a content filter, the
model's refusal); ``max_depth`` still calling tools at the bound; ``error``; ``cancelled``."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and cost of a turn. ``cost`` is None when the price of the model is unknown
    (local and custom models): unknown, never invented. The empty ``Usage()`` costs 0.0, so
    sums start from it; one unknown part makes the whole sum unknown."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = 0.0
    cache_read_tokens: int = 0
    """Of ``prompt_tokens``, those read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of ``prompt_tokens``, those written to the provider's prompt cache."""
    reasoning_tokens: int = 0
    """Of ``completion_tokens``, those the model spent thinking."""

    def cache_text(self) -> str:
        """``cache 91%``: the share of the input tokens read from the provider's prompt
        cache (empty when none was)."""
        if self.cache_read_tokens <= 0 or self.prompt_tokens <= 0:
            return ""
        return f"cache {min(self.cache_read_tokens / self.prompt_tokens, 1.0):.0%}"

    def spent_text(self) -> str:
        """``1,234 tokens, $0.0012`` (``cost unknown`` for an unpriced model)."""
        cost = "cost unknown" if self.cost is None else f"${self.cost:.4f}"
        return f"{self.total_tokens:,} tokens, {cost}"

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens,
                     self.total_tokens + other.total_tokens, cost,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens,
                     self.reasoning_tokens + other.reasoning_tokens)


@dataclass(frozen=True, slots=True)
class AgentTag:
    """Which sub-agent an event comes from: ``id`` is the parent's ``agent`` tool call
    that started it (its card, its ACP tool call), ``name`` the agent's name."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class Event:
    type: ClassVar[str] = "event"
    agent: AgentTag | None = field(default=None, kw_only=True)
    """Set on everything a sub-agent emits (the innermost one, for a sub-agent's own
    sub-agent); None for the conversation's own events. In JSON only when set."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        inner = [data[f.name] for f in fields(self) if isinstance(getattr(self, f.name), Event)]
        for part in (data, *inner):  # an event inside one (done's context) too
            if "agent" in part and part["agent"] is None:
                del part["agent"]
        return {"type": self.type, **data}


@dataclass(frozen=True, slots=True)
class SessionStarted(Event):
    """The conversation file this run writes to; first event of a headless run."""

    type: ClassVar[str] = "session"
    id: str
    path: str
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class TextDelta(Event):
    type: ClassVar[str] = "text"
    delta: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta(Event):
    """A piece of the model's thinking, as it streams (reasoning models only). It is
    shown apart from the reply and is not part of the reply's text."""

    type: ClassVar[str] = "reasoning"
    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted(Event):
    """The model asked for a tool.

    ``server`` is None for a tool that does not exist (the model made up its name);
    ``parent`` is the script's call id for calls made inside code mode."""

    type: ClassVar[str] = "tool_call"
    id: str
    name: str
    server: str | None
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovalDecided(Event):
    type: ClassVar[str] = "approval"
    id: str
    decision: Decision
    reason: str | None = None
    by: str | None = None
    """What decided it: a rule with its file, a server's list, a hook's command, a mode,
    "you" (the person at the gate), or a flag (``--approve auto``)."""


@dataclass(frozen=True, slots=True)
class ToolResult(Event):
    type: ClassVar[str] = "tool_result"
    id: str
    is_error: bool
    text: str
    duration: float = 0.0


@dataclass(frozen=True, slots=True)
class SkillUsed(Event):
    """A call of the built-in ``skill`` tool loaded a skill, read one of its files, or was
    refused (``state``: ``loaded``, ``read``, ``refused``, with ``reason``). ``origin``:
    ``user``, ``project`` or ``server``; ``where``: its ``SKILL.md`` or server; ``tokens``:
    an estimate of what the model read."""

    type: ClassVar[str] = "skill"
    id: str
    name: str
    origin: str
    where: str
    state: str
    file: str | None = None
    reason: str = ""
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class InitDone(Event):
    """``/init`` ended (in ``run`` and over ACP; the app says it in a note): ``outcome`` is
    ``written``, ``denied``, ``no_draft`` (the reply held no file), ``no_project``,
    ``cannot_write`` or ``failed`` (the turn did not end); ``path`` the memory file (None
    with no project); ``lines`` written; ``message`` the sentence a person reads."""

    type: ClassVar[str] = "init"
    outcome: str
    message: str
    path: str | None = None
    lines: int = 0


@dataclass(frozen=True, slots=True)
class ToolProgress(Event):
    """A server's report on a call in flight: ``progress`` of ``total`` (None: unknown),
    and what it is doing (``message``)."""

    type: ClassVar[str] = "progress"
    id: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class TaskUpdate(Event):
    """A call that runs as a task (MCP tasks) changed status: ``task`` is the server's
    task id, ``status`` one of ``working``, ``input_required``, ``completed``, ``failed``,
    ``cancelled``, and ``status_message`` what the server says of it (cleaned)."""

    type: ClassVar[str] = "task"
    id: str
    task: str
    status: str
    status_message: str | None = None


@dataclass(frozen=True, slots=True)
class ServerLog(Event):
    """A line a server logged (``notifications/message``). ``id``: the call in flight it
    is shown with (a warning or worse, during that call), else None."""

    type: ClassVar[str] = "server_log"
    server: str
    level: str
    text: str
    logger: str | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Retrying(Event):
    """An LLM request failed in a way worth retrying; the next try starts after ``delay`` s."""

    type: ClassVar[str] = "retry"
    attempt: int
    max_attempts: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class ErrorOccurred(Event):
    """Something ended the turn or part of it. ``kind`` lets a front end react
    (``llm``, ``stream_cut``, ``max_depth``, ``config``)."""

    type: ClassVar[str] = "error"
    message: str
    kind: str = "llm"


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """Something the user should know that is not an error of the turn, e.g. that it
    waits for MCP servers still starting."""

    type: ClassVar[str] = "notice"
    message: str


@dataclass(frozen=True, slots=True)
class RoundUsage(Event):
    """What one request of a sub-agent cost (its tokens, and its cost on its own model),
    as it ends: a sub-agent's card counts them while it runs. The conversation's own turn
    sends none (its ``done`` carries the turn's)."""

    type: ClassVar[str] = "usage"
    usage: Usage


@dataclass(frozen=True, slots=True)
class ContextSize(Event):
    """How big the request about to go is, in tokens: counted with the model's tokenizer
    (litellm's) and corrected by what the provider reported of the previous request.
    ``window``: what the model takes (None: unknown); ``compact_at``: the size past which
    older messages are summarized first (None: never before the provider refuses). The
    parts: the system prompt with the servers' instructions, the tool definitions, the
    summary of compacted messages, the messages, and the tool results (images included)."""

    type: ClassVar[str] = "context"
    tokens: int
    window: int | None = None
    compact_at: int | None = None
    system: int = 0
    tools: int = 0
    summary: int = 0
    messages: int = 0
    results: int = 0


@dataclass(frozen=True, slots=True)
class Compacted(Event):
    """The conversation was compacted: ``replaced`` more messages are now read as a summary
    (``summary``, one LLM request whose ``usage`` counts in the turn), ``kept`` recent ones
    verbatim, and ``stubbed`` tool results as a stub naming where the whole is kept.
    ``reason``: ``auto`` (past compact_at), ``manual`` (/compact), ``overflow`` (the
    provider refused the request as too long). Every message stays on disk."""

    type: ClassVar[str] = "compaction"
    reason: str
    tokens_before: int
    tokens_after: int
    replaced: int
    kept: int
    stubbed: int = 0
    summary: str = ""
    usage: Usage = field(default_factory=Usage)

    def done(self) -> str:
        """What it did: "12 earlier messages summarized for the model, ..."."""
        done = [f"{counted(self.replaced, 'earlier message')} summarized for the model"] \
            if self.replaced else []
        if self.stubbed:
            done.append(f"{counted(self.stubbed, 'large tool result')} read as a stub")
        return ", ".join(done)

    def describe(self) -> str:
        """One line on it, for a person."""
        why = {"auto": " (near the context window)",
               "overflow": " (the provider said it was too long)"}.get(self.reason, "")
        return (f"compacted the conversation{why}: {self.done()}; "
                f"{self.tokens_before:,} → {self.tokens_after:,} tokens. Every message "
                "stays in the session file")


AgentStatus = Literal["done", "failed", "max_turns", "stopped"]
"""How a sub-agent ended: ``done`` it answered; ``failed`` its model or set-up failed;
``max_turns`` it was still calling tools at its bound; ``stopped`` the person (or the
parent's cancelled turn) stopped it. Whatever the status, the parent's model reads what it
had by then, and why."""


@dataclass(frozen=True, slots=True)
class AgentStarted(Event):
    """A sub-agent began the task of the parent's ``agent`` call ``id``. Its own events
    follow, each with ``agent`` set to ``AgentTag(id, name)``."""

    type: ClassVar[str] = "agent_start"
    id: str
    name: str
    model: str
    task: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class AgentFinished(Event):
    """The sub-agent of the ``agent`` call ``id`` ended: ``usage`` is its own (its turns,
    and those of its own sub-agents), already counted in the parent's turn; ``tools`` the
    tools it called, in order, each once; ``reason`` why it ended when not ``done``. The
    parent's ``tool_result`` for ``id`` follows."""

    type: ClassVar[str] = "agent_end"
    id: str
    name: str
    status: AgentStatus
    usage: Usage = field(default_factory=Usage)
    duration: float = 0.0
    turns: int = 0
    tools: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class TurnDone(Event):
    """Always the last event of a turn that was not cancelled. ``context``: the size of the
    turn's last request (None when no request was measured)."""

    type: ClassVar[str] = "done"
    usage: Usage
    reason: StopReason = "end"
    context: ContextSize | None = None
