"""The model's thinking in the app: a dim, folded block above the reply that grows as the
reasoning streams, then says how long it took and its tokens, unfolds with enter or a
click, is shown again from a resumed session, and never lets the model's text act on
the terminal. The status bar's cached share of the input is here too.

The turns run the real agent with a scripted reasoning model (the agent forwards its
``ReasoningDelta`` events as it does a provider's); the snapshots feed the core's
events to the transcript as tests/ui/test_snapshots.py does."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.kit import make_app, send, steady_cursor, until, write_config
from tui_agent.config import paths
from tui_agent.core.events import (
    ReasoningDelta,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnDone,
    Usage,
)
from tui_agent.core.llm import Reply
from tui_agent.core.session import SessionWriter
from tui_agent.ui.app import AgentApp
from tui_agent.ui.widgets.messages import AssistantMessage, Note
from tui_agent.ui.widgets.prompt import PromptInput
from tui_agent.ui.widgets.thinking import REPAINT_EVERY, ThinkingBlock

pytestmark = pytest.mark.anyio

SIZE = (120, 40)
THINKER_USAGE = Usage(120, 60, 180, 0.0012, reasoning_tokens=42)
THOUGHT = ("The user asks for the sum of the first ten squares.\n"
           "The formula is n(n+1)(2n+1)/6.\n"
           "With n = 10 that is 10 * 11 * 21 / 6 = 385.\n"
           "So the answer is 385.")


class Thinker:
    """A reasoning model, scripted: it thinks in ``pieces``, waits for ``go`` (so a test
    can look at the block while it streams), then answers with ``usage``."""

    def __init__(self, pieces: Sequence[str], answer: str = "It is **385**.",
                 usage: Usage = THINKER_USAGE) -> None:
        self.pieces, self.answer, self.usage = list(pieces), answer, usage
        self.go = asyncio.Event()
        self.streamed = 0
        self.pace = 0.0

    @property
    def model(self) -> str:
        return "test/thinker"

    async def stream(self, messages: Sequence[dict[str, Any]],
                     tools: Sequence[dict[str, Any]] = ()) -> AsyncGenerator[Any, None]:
        for piece in self.pieces:
            yield ReasoningDelta(piece)
            self.streamed += 1
            await asyncio.sleep(self.pace)
        await self.go.wait()
        yield TextDelta(self.answer)
        yield Reply(self.answer, [], "stop", self.usage)


def words(text: str) -> list[str]:
    """``text`` in the pieces a provider streams: a word and its space at a time."""
    return [w + " " for w in text.replace("\n", " \n").split(" ")]


async def with_model(pilot: Pilot[Any], model: Thinker) -> AgentApp:
    app = pilot.app
    assert isinstance(app, AgentApp)
    await until(pilot, app.loaded.is_set)
    await until(pilot, app.backend.ready.is_set)
    app.backend.agent.llm = model
    return app


def shown(widget: ThinkingBlock) -> str:
    """What the block draws (its render, as the screen gets it)."""
    return widget.render().plain


def app_for(tmp_path: Path, **options: Any) -> AgentApp:
    return make_app(write_config(tmp_path / "c.toml", model="openai/snapshot-model"), **options)


async def test_thinking_streams_folded_then_says_how_long_and_unfolds(tmp_path: Path) -> None:
    """While the model thinks the block shows its last two rows (not the first); once the
    reply comes it says how long it took and the reply's reasoning tokens, above the
    reply; enter and a click unfold and fold it."""
    model = Thinker(words(THOUGHT))
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await with_model(pilot, model)
        await send(pilot, app, "what is the sum of the first ten squares?")
        await until(pilot, lambda: model.streamed == len(model.pieces), what="the thinking")
        block = app.transcript.query_one(ThinkingBlock)
        await until(pilot, lambda: "So the answer is 385." in shown(block), what="a repaint")
        lines = shown(block).splitlines()
        assert lines[0].startswith("∴ Thinking…")
        assert lines[1:] == ["With n = 10 that is 10 * 11 * 21 / 6 = 385.",
                             "So the answer is 385."]  # the last two rows, as they stream
        await until(pilot, lambda: block.region.height == 3, what="the block laid out again")
        model.go.set()
        await until(pilot, lambda: app.turns_ended == 1, what="the turn")
        await pilot.pause()
        head = shown(block)
        assert head.startswith("∴ Thought for ") and head.split("\n")[0].endswith(
            " s · 42 tokens  ▸"), head
        assert "\n" not in head  # folded, done: the head alone
        await until(pilot, lambda: block.region.height == 1)
        children = list(app.transcript.children)
        reply = app.transcript.query_one(AssistantMessage)
        assert children.index(block) < children.index(reply)  # above the reply
        assert "385" not in reply.source.replace("**385**", "")  # the thinking is not in it

        block.focus()
        await pilot.press("enter")
        await until(pilot, lambda: block.region.height == 5)  # the head and the four lines
        assert [row.rstrip() for row in shown(block).splitlines()[1:]] == THOUGHT.splitlines()
        await pilot.press("enter")
        await until(pilot, lambda: block.region.height == 1)
        await pilot.click(block)
        await until(pilot, lambda: block.expanded and block.region.height == 5)
        await pilot.click(block)
        await until(pilot, lambda: not block.expanded and block.region.height == 1)


async def test_reasoning_text_cannot_act_on_the_terminal(tmp_path: Path) -> None:
    """Escape sequences and control characters are removed, even split across pieces, and
    markup is shown as the characters it is."""
    hostile = ["plan: \x1b]52;c;", "ZXZpbA==\x07 copy that\x1b[2", "J then ",
               "[link=https://evil.example]click[/link] [bold]loud[/bold]\x9b31m\x00"]
    model = Thinker(hostile)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await with_model(pilot, model)
        await send(pilot, app, "go")
        await until(pilot, lambda: model.streamed == len(hostile))
        model.go.set()
        await until(pilot, lambda: app.turns_ended == 1)
        block = app.transcript.query_one(ThinkingBlock)
        block.expanded = True
        await pilot.pause()
        content = block.render()
        assert content.plain.split("\n", 1)[1] == (
            "plan:  copy that then [link=https://evil.example]click[/link] [bold]loud[/bold]")
        assert not any(ch in content.plain for ch in "\x1b\x07\x9b\x00")
        assert not any("link" in str(span.style) for span in content.spans)
        assert block.text == content.plain.split("\n", 1)[1]  # what copy takes, cleaned too


async def test_thousands_of_pieces_repaint_in_batches(tmp_path: Path) -> None:
    """A fast stream of reasoning repaints the block a few times a second, not once a
    piece (the reply's text is coalesced the same way)."""
    model = Thinker(["warm up "])
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await with_model(pilot, model)
        await send(pilot, app, "go")
        await until(pilot, lambda: model.streamed == 1)
        block = app.transcript.query_one(ThinkingBlock)
        renders = itertools.count()
        render = block.render

        def counted() -> Any:  # watch, not change, what the block draws
            next(renders)
            return render()

        block.render = counted  # type: ignore[method-assign]
        loop = asyncio.get_running_loop()
        started = loop.time()
        for i in range(600):  # about a second of a fast stream
            await app.transcript.show(ReasoningDelta(f"step {i} "))
            await asyncio.sleep(0.002)
        took = loop.time() - started
        await pilot.pause(2 * REPAINT_EVERY)
        done = next(renders)
        assert render().plain.endswith("599")  # the last rows
        # Textual renders a block to measure it and to paint it (a few times a repaint);
        # a repaint per piece renders it about ten times as often as this allows.
        assert 2 <= done <= 3 * (took / REPAINT_EVERY + 3), (done, took)
        model.go.set()


async def test_a_turn_that_thinks_twice_shares_its_tokens(tmp_path: Path) -> None:
    """Two blocks in one turn (thinking, a tool call, thinking again): each says how long it
    took, and the turn's reasoning tokens are shared by their length, marked as a share."""
    app = app_for(tmp_path)
    clock = iter([10.0, 12.5, 20.0, 20.5])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.loaded.is_set() and app.backend.ready.is_set())
        transcript = app.transcript
        transcript.thoughts.clock = lambda: next(clock)
        for event in [ReasoningDelta(""), ReasoningDelta("a" * 300),
                      ToolCallStarted("c", "t__now", "t", "now"),
                      ToolResult("c", False, "noon"), ReasoningDelta("b" * 100),
                      TextDelta("done"), TurnDone(Usage(10, 500, 510, reasoning_tokens=400))]:
            await transcript.show(event)
        await pilot.pause()
        heads = [shown(b) for b in transcript.query(ThinkingBlock)]
        assert heads == ["∴ Thought for 2.5 s · ~300 tokens  ▸",
                         "∴ Thought for 0.5 s · ~100 tokens  ▸"]


async def test_stopping_mid_thought_keeps_it_with_its_time(tmp_path: Path) -> None:
    """Esc while the model thinks: the block stays, says how long it thought (its tokens
    were never reported), and the turn says it was stopped."""
    model = Thinker(words(THOUGHT))
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await with_model(pilot, model)
        await send(pilot, app, "go")
        await until(pilot, lambda: model.streamed == len(model.pieces))
        await pilot.press("escape")
        await until(pilot, lambda: app.turns_ended == 1)
        await pilot.pause()
        block = app.transcript.query_one(ThinkingBlock)
        assert not block.streaming
        assert shown(block).startswith("∴ Thought for ") and "tokens" not in shown(block)
        assert any("stopped" in str(n.render()) for n in app.transcript.query(Note))


async def test_a_resumed_conversation_shows_its_thinking_folded(tmp_path: Path) -> None:
    """An assistant message saved with ``reasoning_content`` (or Anthropic's
    ``thinking_blocks``) comes back with its folded block above the reply."""
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    writer = SessionWriter.create(store / "thought.jsonl", {"model": "x"})
    writer.message({"role": "user", "content": "sum of squares?"})
    writer.message({"role": "assistant", "content": "It is 385.",
                    "reasoning_content": THOUGHT})
    writer.message({"role": "user", "content": "and cubes?"})
    writer.message({"role": "assistant", "content": "It is 3025.", "thinking_blocks": [
        {"type": "thinking", "thinking": "Cubes sum to the square of the triangle.",
         "signature": "sig"}, {"type": "redacted_thinking", "data": "opaque"}]})
    writer.close()
    app = app_for(tmp_path, resume=writer.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any("resumed" in str(n.render())
                                       for n in app.transcript.query(Note)), what="the replay")
        first, second = app.transcript.query(ThinkingBlock)
        assert shown(first) == shown(second) == "∴ Thought  ▸"
        await until(pilot, lambda: first.region.height == 1)  # folded: the head alone
        children = list(app.transcript.children)
        replies = list(app.transcript.query(AssistantMessage))
        assert children.index(first) < children.index(replies[0]) < children.index(second)
        second.expanded = True
        await pilot.pause()
        assert shown(second).endswith("Cubes sum to the square of the triangle.")
        assert "opaque" not in shown(second)


async def test_status_bar_shows_the_cached_share_only_when_some_was(tmp_path: Path) -> None:
    """``cache 91%`` beside tokens and cost once the provider reported cache reads; nothing
    about the cache before."""
    model = Thinker([], usage=Usage(1000, 50, 1050, 0.002))
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await with_model(pilot, model)
        model.go.set()
        await send(pilot, app, "one")
        await until(pilot, lambda: app.turns_ended == 1)
        await pilot.pause()
        assert "1,050 tokens · $0.0020 · " in app.status.render().plain
        assert "cache" not in app.status.render().plain
        model.usage = Usage(1000, 50, 1050, 0.001, cache_read_tokens=1820)
        await send(pilot, app, "two")
        await until(pilot, lambda: app.turns_ended == 2)
        await pilot.pause()
        assert "2,100 tokens · $0.0030 · cache 91% · " in app.status.render().plain


# -- snapshots -------------------------------------------------------------------------

def feeding(events: Sequence[Any], clock: Sequence[float] = ()) -> Any:
    async def before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, AgentApp)
        await until(pilot, app.backend.ready.is_set)
        steady_cursor(app.chat.query_one(PromptInput))
        ticks = iter(clock)
        app.transcript.thoughts.clock = lambda: next(ticks)
        await app.transcript.user("what is the sum of the first ten squares?")
        for event in events:
            await app.transcript.show(event)
        await pilot.pause(0.2)
    return before


async def expand(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, AgentApp)
    app.transcript.query_one(ThinkingBlock).focus()
    await pilot.press("enter")
    await pilot.pause(0.2)


LONG_LAST_LINE = THOUGHT + (" It checks out: 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 81 + 100 "
                            "adds up to 385 as well.")
STREAMING = [ReasoningDelta(p) for p in words(LONG_LAST_LINE)]


def test_snapshot_thinking_folded_while_it_streams(snap_compare: Any, tmp_path: Path) -> None:
    """The block as the model thinks: its head and the last two rows, dim, no reply yet."""
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE,
                        run_before=feeding(STREAMING, [1.0]))


def test_snapshot_thinking_folded_while_it_streams_80x24(snap_compare: Any,
                                                         tmp_path: Path) -> None:
    """The same in 80 columns: the last line, wrapped to the width, fills the two rows."""
    assert snap_compare(app_for(tmp_path), terminal_size=(80, 24),
                        run_before=feeding(STREAMING, [1.0]))


DONE = [*STREAMING, TextDelta("The sum is **385**."),
        TurnDone(Usage(120, 860, 980, 0.0041, reasoning_tokens=812))]


def test_snapshot_thinking_done_and_expanded(snap_compare: Any, tmp_path: Path) -> None:
    """Done: how long it took and its tokens; unfolded (focused, enter): the whole text,
    above the reply."""
    async def before(pilot: Pilot[Any]) -> None:
        await feeding(DONE, [1.0, 5.2])(pilot)
        await expand(pilot)

    assert snap_compare(app_for(tmp_path), terminal_size=SIZE, run_before=before)
