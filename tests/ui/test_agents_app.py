"""Sub-agents in the app end to end: two scripted models on different ``api_base``s (the
parent's and the sub-agent's, from ``[models."..."]``), an agent file in the user's
``agents/`` folder, our MCP server over stdio. The sub-agent's card follows it live and
unfolds to what it did, its call asks in the modal that names it, ``x`` stops it alone
(the parent's turn goes on), ``/agents`` lists the agent files, and a resumed
conversation shows the card as it ended, its transcript read back from its own file.
The cards fed events directly are in test_agent_cards.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.fakes.llm_server import FakeLLM, FakeToolCall
from tests.subagent_kit import (
    CHILD,
    CHILD_USAGE,
    HELPER,
    PARENT,
    PARENT_USAGE,
    agent_file,
    call_agent,
    two_models,
)
from tests.subagent_kit import reply as scripted
from tests.ui.kit import make_app, noted, notes, ready, send, shown, until, write_config
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.widgets.agent_card import AgentCard
from tui_agent.ui.widgets.messages import AssistantMessage
from tui_agent.ui.widgets.tool_card import ToolCard

pytestmark = [pytest.mark.slow]
SIZE = (100, 40)


@pytest.fixture
def models() -> Iterator[tuple[FakeLLM, FakeLLM]]:
    with two_models() as both:
        yield both


def app_config(tmp_path: Path, parent: FakeLLM, child: FakeLLM, extra: str = "") -> Path:
    """The parent's model, the child's model at its own server, our MCP server ``r``."""
    return write_config(tmp_path / "c.toml", base_url=parent.base_url, model=PARENT,
                        servers={"r": []}, extra=f"""
[models."{CHILD}"]
api_base = "{child.base_url}"
api_key = "sk-child"
max_retries = 0
timeout = 30
{extra}""")


def cards(app: AgentApp) -> list[AgentCard]:
    return list(app.transcript.query(AgentCard))


def text_of(card: AgentCard, part: str) -> str:
    return str(card.query_one(part, Static).render())


def parent_replies(app: AgentApp) -> list[str]:
    return [m.source for m in app.transcript.query(AssistantMessage)
            if not any(isinstance(a, AgentCard) for a in m.ancestors)]


@pytest.mark.anyio
async def test_a_sub_agent_asks_in_a_modal_that_names_it_and_its_card_keeps_what_it_did(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    agent_file("helper", HELPER)
    parent.push(scripted("Let me delegate.", [call_agent("call_1", "Echo 'hi'.\nThen say so.",
                                                         "helper")], usage=PARENT_USAGE),
                scripted("The helper says hi.", usage=PARENT_USAGE))
    child.push(scripted("Echoing.", [FakeToolCall("r__echo", {"text": "hi"}, id="c1")],
                        usage=CHILD_USAGE),
               scripted("It echoed: hi", usage=CHILD_USAGE))
    app = make_app(app_config(tmp_path, parent, child))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "delegate it")
        modal = await shown(pilot, app, ApprovalScreen, "the sub-agent's question", 60)
        assert str(modal.query_one(".asker", Static).render()) == \
            "asked by the sub-agent helper (call_1)"
        [card] = cards(app)
        assert card.cards["c1"].status == "waiting"
        assert text_of(card, ".status") == "● running"
        assert text_of(card, ".live").startswith("calling r · echo · 1 tool")
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended >= 1, 60, "the turn to end")
        assert text_of(card, ".name") == f"⧉ agent helper · {CHILD}"
        assert text_of(card, ".task") == "Echo 'hi'."
        assert text_of(card, ".status") == "✓ done"
        assert text_of(card, ".live").startswith("1 tool · 44 tokens · ")
        assert not app.transcript.query(ToolCard).filter(".-pending"), "no stray tool card"
        assert parent_replies(app) == ["Let me delegate.", "The helper says hi."]
        assert len(child.requests) == 2 and len(parent.requests) == 2
        card.focus()
        await pilot.press("enter")
        await until(pilot, lambda: card.query_one(".body").display, what="its transcript")
        assert [m.source for m in card.query(AssistantMessage)] == ["Echoing.",
                                                                    "It echoed: hi"]
        assert [(c.tool, c.status) for c in card.query(ToolCard)] == [("echo", "done")]
        await app.action_quit()


@pytest.mark.anyio
async def test_four_cards_run_side_by_side_and_the_app_keeps_answering(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    agent_file("helper", HELPER)
    calls = [call_agent(f"call_{n}", f"Part {n}.", "helper") for n in range(1, 5)]
    parent.push(scripted("", calls, usage=PARENT_USAGE),
                scripted("All four are done.", usage=PARENT_USAGE))
    words = [f"Part {n} is done: " + "lorem ipsum " * 6 for n in range(1, 5)]
    child.push(*(scripted(text, usage=CHILD_USAGE, delay=0.05) for text in words))
    app = make_app(app_config(tmp_path, parent, child))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        loop = asyncio.get_running_loop()
        beats: list[float] = []
        app.set_interval(0.05, lambda: beats.append(loop.time()))
        await send(pilot, app, "four parts")
        await until(pilot, lambda: len(cards(app)) == 4
                    and all(c.status == "running" for c in cards(app)), 60,
                    "four sub-agents running at once")
        await until(pilot, lambda: app.turns_ended >= 1, 90, "the turn to end")
        assert sorted(c.status for c in cards(app)) == ["done"] * 4
        replies = sorted(m.source for c in cards(app) for m in c.query(AssistantMessage))
        assert replies == sorted(words), "each card holds its own sub-agent's reply"
        assert parent_replies(app) == ["All four are done."]
        gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
        assert gaps and max(gaps) < 3.0, f"the app stopped answering for {max(gaps):.1f} s"
        await app.action_quit()


@pytest.mark.anyio
async def test_x_stops_one_sub_agent_and_the_turn_goes_on(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    agent_file("helper", HELPER)
    parent.push(scripted("", [call_agent("call_1", "Take your time.", "helper")],
                         usage=PARENT_USAGE),
                scripted("It was stopped; going on without it.", usage=PARENT_USAGE))
    child.push(scripted(hang=True))
    app = make_app(app_config(tmp_path, parent, child))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "delegate it")
        await until(pilot, lambda: cards(app) and child.requests, 60, "the sub-agent's request")
        [card] = cards(app)
        card.focus()
        await pilot.press("x")
        await until(pilot, lambda: card.status == "stopped", 30, "the card to say stopped")
        await until(pilot, lambda: app.turns_ended >= 1, 60, "the parent's turn to end")
        assert parent_replies(app) == ["It was stopped; going on without it."]
        assert not any("stopped; what arrived so far" in n for n in notes(app)), \
            "the turn itself was not stopped"
        await app.action_quit()


@pytest.mark.anyio
async def test_agents_lists_the_files_and_the_broken_ones(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    agent_file("helper", HELPER)
    agent_file("broken", "---\nname: [unclosed\n---\nbody\n")
    app = make_app(app_config(tmp_path, parent, child))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/agents")
        said = await noted(pilot, app, "the model may start", 30)
        assert "general (builtin)" in said
        assert f"helper (user): model {CHILD}, tools mcp__r__echo" in said
        assert "broken.md:3: bad frontmatter" in said
        assert any("agent file not used:" in n and "broken.md:3" in n for n in notes(app)), \
            "said at start, as a skill not offered is"
        await app.action_quit()


@pytest.fixture
def saved(models: tuple[FakeLLM, FakeLLM], tmp_path: Path,
          capsys: pytest.CaptureFixture[str]) -> str:
    """A conversation in which the helper ran, written by ``tui-agent run`` (before the
    test's event loop: run has its own), for ``--resume PATH``."""
    from tui_agent.cli import main

    parent, child = models
    agent_file("helper", HELPER)
    parent.push(scripted("", [call_agent("call_1", "Echo 'hi'.", "helper")],
                         usage=PARENT_USAGE),
                scripted("Done.", usage=PARENT_USAGE))
    child.push(scripted("Echoing.", [FakeToolCall("r__echo", {"text": "hi"}, id="c1")],
                        usage=CHILD_USAGE),
               scripted("It echoed: hi", usage=CHILD_USAGE))
    config = app_config(tmp_path, parent, child)
    session = tmp_path / "resumed.jsonl"
    code = main(["run", "--config", str(config), "--approve", "auto", "--session",
                 str(session), "delegate it"])
    assert code == 0, capsys.readouterr()
    capsys.readouterr()
    return str(session)


@pytest.mark.anyio
async def test_a_resumed_sub_agent_is_its_card_and_unfolds_to_its_saved_transcript(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path, saved: str) -> None:
    parent, child = models
    app = make_app(app_config(tmp_path, parent, child), resume=saved)
    async with app.run_test(size=SIZE) as pilot:
        await noted(pilot, app, "resumed", 60)
        await until(pilot, lambda: cards(app), 20, "the agent card")
        [card] = cards(app)
        assert text_of(card, ".status") == "✓ done"
        assert text_of(card, ".task") == "Echo 'hi'."
        assert text_of(card, ".live").startswith("1 tool · 44 tokens")
        assert not any(c.tool == "agent" for c in app.transcript.query(ToolCard))
        card.focus()
        await pilot.press("enter")
        await until(pilot, lambda: card.query(AssistantMessage), 20, "its transcript")
        assert [m.source for m in card.query(AssistantMessage)] == ["Echoing.",
                                                                    "It echoed: hi"]
        assert [(c.tool, c.status) for c in card.query(ToolCard)] == [("echo", "done")]
        await app.action_quit()

