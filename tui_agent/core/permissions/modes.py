"""The permission modes a person switches between (shift+tab in the app, ``/mode``,
``--mode``, an ACP session's mode):

- ``default``: as the rules and the servers' lists say; anything else asks.
- ``plan``: read-only. Only a tool its server annotates ``readOnlyHint`` (or one the
  user marked read-only) runs; any other call is refused without asking, and the model
  is told to present a plan instead.
- ``auto``: everything the rules do not deny runs without asking (a tool whose server
  asks at every call, the unsandboxed shell, still asks: that is the server's demand).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

Mode = Literal["default", "plan", "auto"]
MODES: tuple[Mode, ...] = ("default", "plan", "auto")
"""In the order shift+tab cycles them."""

MODE_WORDS: dict[Mode, str] = {
    "default": "ask before tools that are not allowed",
    "plan": "read-only: tools that change things are refused; the model presents a plan",
    "auto": "every tool not denied runs without asking",
}

PLAN_REFUSAL = (
    "Refused without running: the user has tui-agent in plan mode, which is read-only. "
    "Only tools that only read (annotated readOnlyHint, or marked read-only by the user) "
    "run in plan mode. Do not try this or other changing tools now: finish looking with "
    "read-only tools, then present your plan to the user and stop; the user will leave "
    "plan mode when they want it carried out.")
"""What the model reads of a call plan mode refused."""

PLAN_PROMPT = (
    "tui-agent is in plan mode: read-only. Look around with tools that only read, then "
    "present a plan (what you would change, in which order, and why) and stop. Calls of "
    "tools that change anything are refused until the user leaves plan mode.")
"""Said to the model at the start of each turn taken in plan mode."""


def next_mode(mode: Mode) -> Mode:
    """The mode after ``mode`` in shift+tab's cycle."""
    return MODES[(MODES.index(mode) + 1) % len(MODES)]


def parse_mode(text: str) -> Mode | None:
    """``text`` as a mode (any case, surrounding blanks ignored), or None."""
    word = text.strip().lower()
    return next((m for m in MODES if m == word), None)


NOTE_OPEN, NOTE_CLOSE = "\n\n<system-reminder>\n", "\n</system-reminder>"
"""Around what tui-agent adds to a user's message for the model (the plan-mode note).
The note goes with the message of each turn taken in plan mode, not in the system prompt:
the system prompt stays byte for byte the same, so the provider's prompt cache keeps
hitting, and the note stays in the history as sent (a resumed conversation reads it too)."""


def with_mode_note(content: str | list[Any], mode: Mode) -> str | list[Any]:
    """A user message's ``content`` as sent in ``mode``: in plan mode with
    :data:`PLAN_PROMPT` after the words (as one more text part, for words and images)."""
    if mode != "plan":
        return content
    note = f"{NOTE_OPEN}{PLAN_PROMPT}{NOTE_CLOSE}"
    if isinstance(content, str):
        return content + note
    return [*content, {"type": "text", "text": note.strip("\n")}]


def without_mode_note(text: str) -> str:
    """A user message's words as the person wrote them, without the plan-mode note (what
    a transcript, an export and an editor's replay show)."""
    note = f"{NOTE_OPEN}{PLAN_PROMPT}{NOTE_CLOSE}"
    if PLAN_PROMPT not in text:
        return text
    return text.replace(note, "").replace(note.strip("\n"), "").rstrip("\n")


def plan_of(messages: Sequence[dict[str, Any]]) -> str | None:
    """The last reply with words of the last turn in ``messages``: the plan a turn taken in
    plan mode ended with (None: it ended without words)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return None
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, str) and content.strip():
            return content
    return None
