"""The parts of compaction that need no model: where the recent messages kept verbatim
begin, the compaction prompt and the older messages as text for it, the stub a tool
result is read as, and how a provider says a request was too long.

:class:`~tui_agent.core.context.Context` puts them together around the one LLM request a
compaction makes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from tui_agent.core.llm.errors import LLMError
from tui_agent.tools.wording import counted

KEEP_RECENT = 0.25
"""The part of the window the recent messages kept verbatim may take (automatic
compaction); the rest is summarized."""
SUMMARY_SHARE = 0.15
"""The part of the window a summary may take (at most :data:`SUMMARY_MOST` tokens)."""
SUMMARY_MOST = 2000
SUMMARY_INPUT = 0.6
"""The part of the window the summary request may take."""
STUB_FROM = 400
"""Tokens from which a tool result may be read as a stub to make a request fit."""
SUMMARY_HEAD = ("[tui-agent compacted the earlier conversation to fit the model's context "
                "window: this summary stands for {n} earlier messages; the recent messages "
                "follow word for word.]")

COMPACT_SYSTEM = """\
You are compacting a conversation between a user and an AI assistant that uses tools, so \
that the assistant can go on with only your summary and the most recent messages. Write the \
summary for the assistant, in the language of the conversation, under these headings:

1. What the user asked: each request, in the user's own words where they are exact \
(names, numbers, paths, quoted text).
2. Decisions made, and why.
3. Files, resources, URLs and records touched, and what was done to each.
4. Tool results that still matter: exact figures, names, ids, errors (not whole outputs).
5. Open tasks: what is unfinished, and the next step.

Keep facts exact; leave out greetings, repetition and anything settled that no longer \
matters. Write at most {words} words. Reply with the summary only."""


def boundaries(messages: Sequence[dict[str, Any]], start: int, end: int) -> list[int]:
    """Where a verbatim tail may begin, in ``(start, end]``: at a user message or an
    assistant reply, so that a tool call and its result are never split (a tool result
    always follows its call, and so does the message of the images calls returned)."""
    found = []
    for j in range(start + 1, end + 1):
        if j == len(messages):
            found.append(j)
            continue
        if messages[j].get("role") in ("user", "assistant") and not is_result(
                messages[j], messages[j - 1]):
            found.append(j)
    return found


def is_result(message: dict[str, Any], before: dict[str, Any] | None) -> bool:
    """A tool result, or the message of the images tool calls returned (it follows them)."""
    return message.get("role") == "tool" or (
        before is not None and before.get("role") == "tool" and message.get("role") == "user")


def choose_cut(messages: Sequence[dict[str, Any]], sizes: Sequence[int], start: int,
               keep: int, *, between_turns: bool) -> int | None:
    """The index where the verbatim tail begins: the earliest turn boundary (a user
    message) whose tail fits in ``keep`` tokens, else the earliest reply boundary that
    fits, else the latest boundary there is. The tail holds at least the message the next
    request answers, unless ``between_turns`` (a manual compaction: the next message is
    still to come). None: nothing before the tail to compact."""
    end = len(messages) if between_turns else len(messages) - 1
    cuts = boundaries(messages, start, end)
    if not cuts:
        return None
    tails = {j: sum(sizes[j:]) for j in cuts}
    users = [j for j in cuts if j < len(messages) and messages[j].get("role") == "user"]
    for group in (users, cuts):
        fitting = [j for j in group if tails[j] <= keep]
        if fitting:
            return fitting[0]
    return cuts[-1]


def latest_turn(messages: Sequence[dict[str, Any]], sizes: Sequence[int], start: int,
                most: int) -> int:
    """Tokens of the latest turn (from its user message on), or 0 if it has more than
    ``most``: what a manual compaction keeps verbatim."""
    turns = [j for j in boundaries(messages, start, len(messages) - 1)
             if messages[j].get("role") == "user"]
    size = sum(sizes[turns[-1]:]) if turns else 0
    return size if size <= most else 0


def summary_message(summary: str, replaces: int) -> dict[str, Any]:
    return {"role": "user", "content": f"{SUMMARY_HEAD.format(n=replaces)}\n\n{summary}"}


def summary_request(earlier: str | None, old: Sequence[dict[str, Any]], instructions: str | None,
                    budget: int, words: int, count: Callable[[str], int]
                    ) -> list[dict[str, Any]]:
    """The messages of the request that summarizes ``old`` (after the ``earlier``
    summary, if any), in at most ``budget`` tokens of input."""
    system = COMPACT_SYSTEM.format(words=words)
    if instructions:
        system += f"\n\nThe user asks this of the summary: {instructions}"
    head = f"The summary of what came before:\n\n{earlier}\n\n" if earlier else ""
    room = max(200, budget - count(system) - count(head) - 50)
    text = render(old, room, count)
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"{head}The conversation to summarize:\n\n"
                                        f"<conversation>\n{text}\n</conversation>"}]


def render(messages: Sequence[dict[str, Any]], budget: int, count: Callable[[str], int]
           ) -> str:
    """``messages`` as text for the summarizer, in about ``budget`` tokens: tool results
    cut first, then every message, then messages from the middle left out."""
    for result_chars, message_chars in ((4000, 20000), (600, 4000), (200, 1000)):
        lines = [_line(m, result_chars, message_chars) for m in messages]
        text = "\n\n".join(lines)
        if count(text) <= budget:
            return text
    budget_chars = budget * 3  # a rough start, refined by counting
    while True:
        head: list[str] = []
        tail: list[str] = []
        used = 0
        for i in range(len(lines)):  # alternately from the start and from the end
            line = lines[i // 2] if i % 2 == 0 else lines[-1 - i // 2]
            if used + len(line) > budget_chars or len(head) + len(tail) >= len(lines):
                break
            (head if i % 2 == 0 else tail).append(line)
            used += len(line)
        left_out = len(lines) - len(head) - len(tail)
        text = "\n\n".join([*head, f"[... {counted(left_out, 'message')} left out ...]",
                            *reversed(tail)])
        if count(text) <= budget or budget_chars < 400:
            return text
        budget_chars = budget_chars * 3 // 4


def _line(message: dict[str, Any], result_chars: int, message_chars: int) -> str:
    role = message.get("role")
    if role == "tool":
        return f"[tool result {message.get('tool_call_id', '')}]\n" + _cut(
            _text(message.get("content")), result_chars)
    text = _cut(_text(message.get("content")), message_chars)
    calls = [f"[calls {c.get('function', {}).get('name')}("
             f"{_cut(str(c.get('function', {}).get('arguments')), 600)}) "
             f"as {c.get('id', '')}]" for c in message.get("tool_calls") or ()]
    return "\n".join([f"[{role}]", *([text] if text else []), *calls])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if p.get("type") == "text" else f"[{p.get('type')}]"
                         for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content)


def _cut(text: str, most: int) -> str:
    if len(text) <= most:
        return text
    half = most // 2
    return f"{text[:half]} [... {len(text) - most:,} characters left out ...] {text[-half:]}"


def stub(chars: int, where: str | None) -> str:
    """What the model reads in place of a tool result taken out to fit the window."""
    kept = f"the whole of it is kept in {where}" if where else "it is not kept"
    return (f"[This tool result ({chars:,} characters) was taken out of the conversation to "
            f"fit the model's context window; {kept}. Call the tool again if you need it.]")


_OVERFLOW = re.compile(r"context[ _-]?(length|window)|maximum context|too many tokens|"
                       r"prompt is too long|input is too long|too long for the model|"
                       r"reduce the length|exceeds? the (model's )?(maximum|context)", re.I)


_URL = re.compile(r"\bhttps?://\S+", re.I)
"""A link in a provider's message: its words ("...#max-tokens-and-context-window-size")
are no account of the failure, so no pattern reads them."""


def without_links(text: str) -> str:
    """``text`` with its URLs left out (the patterns here read only the sentence)."""
    return _URL.sub("", text)


def overflowed(exc: LLMError) -> bool:
    """Whether the provider refused the request as too long for the model."""
    return exc.kind == "context_window" or exc.kind == "bad_request" and bool(
        _OVERFLOW.search(without_links(str(exc))))


_WINDOW = re.compile(r"maximum context length is (\d[\d,]*)|(\d[\d,]*) tokens? > (\d[\d,]*)"
                     r" maximum|context (?:window|length) (?:of|is) (\d[\d,]*)", re.I)


def window_in(message: str) -> int | None:
    """The window a provider's refusal names, if it names one."""
    found = _WINDOW.search(without_links(message))
    if found is None:
        return None
    number = found.group(1) or found.group(3) or found.group(4)
    return int(number.replace(",", "")) if number else None
