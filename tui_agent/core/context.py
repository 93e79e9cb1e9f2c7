"""How much of the model's context window a conversation takes, and what the model reads
of it once compacted.

One :class:`Context` belongs to each :class:`~tui_agent.core.agent.Agent`. Before every
request it counts it (the model's tokenizer, message by message and cached; scaled by how
the provider's reported prompt tokens of the previous request compared with our count of
it), against the window (``[model] context_window``, litellm's model info, or what a
provider's refusal said). It holds the compaction in force: the summary that stands for
the first :attr:`Context.start` messages, and the tool results read as a stub. The
messages themselves are never changed or dropped: the agent keeps them all, the session
file too; only the request is built from the compacted view.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tui_agent.core.compaction import STUB_FROM, is_result, stub, summary_message
from tui_agent.core.events import ContextSize
from tui_agent.core.llm import ChatModel, rough_count
from tui_agent.core.session import Compaction, SessionWriter

PER_MESSAGE = 4
"""Tokens a message costs beyond its text (role and separators)."""
MEDIA_TOKENS = 1000
"""Tokens counted for one image or sound part (providers charge by size; this is a
middling image)."""
TRUST_REPORT = (0.5, 2.0)
"""How far the provider's count may differ from ours and still correct it: further, the
report is taken for nonsense (a server that reports a constant) and ignored."""


class Counter:
    """Tokens of texts and messages with one tokenizer; messages are counted once each."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self.count = count
        self._texts: dict[str, int] = {}
        self._messages: dict[int, tuple[dict[str, Any], int]] = {}

    def text(self, text: str) -> int:
        """For the few texts sent again and again (the system prompt, tool definitions)."""
        found = self._texts.get(text)
        if found is None:
            if len(self._texts) > 512:
                self._texts.clear()
            found = self._texts[text] = self.count(text)
        return found

    def message(self, message: dict[str, Any]) -> int:
        hit = self._messages.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        size = PER_MESSAGE + self._content(message.get("content"))
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            size += 3 + self.count(str(function.get("name", ""))) + self.count(
                str(function.get("arguments", "")))
        self._messages[id(message)] = (message, size)
        return size

    def forget_all_but(self, messages: Sequence[dict[str, Any]]) -> None:
        """Drop what was counted of messages no longer sent (a compacted past, old stubs)."""
        keep = {id(m) for m in messages}
        self._messages = {k: v for k, v in self._messages.items() if k in keep}

    def _content(self, content: Any) -> int:
        if isinstance(content, str):
            return self.count(content)
        if isinstance(content, list):
            return sum(self.count(str(p.get("text", ""))) if p.get("type") == "text"
                       else MEDIA_TOKENS for p in content if isinstance(p, dict))
        return 0


@dataclass
class Request:
    """One request about to go, as the context sees it."""

    system: str | None
    tools: list[dict[str, Any]]


class Context:
    """The window, the count, and the compaction in force of one conversation."""

    def __init__(self, compact_at: float, state: Compaction | None = None, start: int = 0
                 ) -> None:
        self.compact_at = compact_at
        self.summary: str | None = state.summary if state else None
        self.replaced = state.replaces if state else 0
        """Messages (as the session file counts them) the summary stands for."""
        self.start = start
        """Index in the agent's messages of the first one the model reads verbatim."""
        self.stubbed: set[str] = set(state.stubbed) if state else set()
        self.ratio = 1.0
        """The provider's count over ours, from the last request it reported on."""
        self.learned: int | None = None
        """The window a provider's refusal named (or implied), when nothing else knew it."""
        self.last: ContextSize | None = None
        self._raw = 0
        self._stubs: dict[str, dict[str, Any]] = {}
        """The stub each stubbed result is read as, made (and the result saved) once."""
        self._counter: tuple[ChatModel, Counter] | None = None
        self._window: tuple[ChatModel, int | None] | None = None

    def state(self) -> Compaction:
        """The compaction in force, as the session file records it."""
        return Compaction(self.summary, self.replaced, tuple(sorted(self.stubbed)))

    # -- the view the model reads --------------------------------------------------------

    def view(self, messages: Sequence[dict[str, Any]], session: SessionWriter | None
             ) -> list[dict[str, Any]]:
        """The messages the model reads: the summary, then the rest verbatim, with a stub for
        each tool result taken out (naming the file that keeps it)."""
        out: list[dict[str, Any]] = []
        if self.summary is not None:
            out.append(summary_message(self.summary, self.replaced))
        for message in messages[self.start:]:
            call_id = message.get("tool_call_id")
            if message.get("role") == "tool" and call_id in self.stubbed:
                stubbed = self._stubs.get(str(call_id))
                if stubbed is None:
                    stubbed = self._stubs[str(call_id)] = self._stubbed(
                        message, str(call_id), session)
                out.append(stubbed)
            else:
                out.append(message)
        return out

    def _stubbed(self, message: dict[str, Any], call_id: str,
                 session: SessionWriter | None) -> dict[str, Any]:
        text = message.get("content")
        text = text if isinstance(text, str) else json.dumps(text)
        where = None
        if session is not None:
            try:
                where = str(session.save_result(call_id, text, keep=True))
            except OSError:
                where = None
        return {"role": "tool", "tool_call_id": call_id, "content": stub(len(text), where)}

    # -- counting --------------------------------------------------------------------------

    async def counter(self, llm: ChatModel) -> Counter:
        if self._counter is None or self._counter[0] is not llm:
            make = getattr(llm, "counter", None)
            count = await asyncio.to_thread(make) if make is not None else rough_count
            self._counter = (llm, Counter(count))
            self.ratio = 1.0
        return self._counter[1]

    async def window(self, llm: ChatModel) -> int | None:
        if self._window is None or self._window[0] is not llm:
            find = getattr(llm, "window", None)
            self._window = (llm, await asyncio.to_thread(find) if find is not None else None)
            self.learned = None
        known = self._window[1]
        if self.learned and (known is None or self.learned < known):
            return self.learned  # the provider's word wins over a window it does not have
        return known

    async def measure(self, llm: ChatModel, request: Request,
                      view: Sequence[dict[str, Any]]) -> ContextSize:
        """The size of ``request`` with ``view`` as its messages, part by part."""
        counter = await self.counter(llm)
        window = await self.window(llm)

        def count() -> ContextSize:
            system = counter.text(request.system) + PER_MESSAGE if request.system else 0
            tools = sum(counter.text(json.dumps(t, sort_keys=True)) for t in request.tools)
            summary = messages = results = 0
            for i, message in enumerate(view):
                size = counter.message(message)
                if i == 0 and self.summary is not None:
                    summary += size
                elif is_result(message, view[i - 1] if i else None):
                    results += size
                else:
                    messages += size
            counter.forget_all_but(view)
            self._raw = system + tools + summary + messages + results + 3
            scale = self.ratio
            return ContextSize(round(self._raw * scale), window, self.threshold(window),
                               round(system * scale), round(tools * scale),
                               round(summary * scale), round(messages * scale),
                               round(results * scale))

        self.last = await asyncio.to_thread(count)
        return self.last

    def threshold(self, window: int | None) -> int | None:
        return int(window * self.compact_at) if window else None

    def reported(self, prompt_tokens: int) -> None:
        """The provider's count of the request last measured: it corrects the next ones."""
        if prompt_tokens > 0 and self._raw > 0:
            ratio = prompt_tokens / self._raw
            if TRUST_REPORT[0] <= ratio <= TRUST_REPORT[1]:
                self.ratio = ratio

    def sizes(self, messages: Sequence[dict[str, Any]]) -> list[int]:
        """Each message's tokens (counted, so :meth:`counter` has run); 0 for those before
        :attr:`start`, which the model no longer reads (they are not counted again)."""
        assert self._counter is not None
        counter = self._counter[1]
        return [0] * self.start + [counter.message(m) for m in messages[self.start:]]

    def large_results(self, messages: Sequence[dict[str, Any]], need: int) -> list[str]:
        """The oldest tool results of :data:`STUB_FROM` tokens or more, not yet stubs, whose
        stubs free ``need`` tokens (all of them if that is not enough)."""
        found: list[str] = []
        freed = 0
        for message, size in zip(messages[self.start:], self.sizes(messages)[self.start:],
                                 strict=True):
            call_id = message.get("tool_call_id")
            if message.get("role") != "tool" or call_id in self.stubbed or size < STUB_FROM:
                continue
            found.append(str(call_id))
            freed += size - 80
            if freed * self.ratio >= need:
                break
        return found
