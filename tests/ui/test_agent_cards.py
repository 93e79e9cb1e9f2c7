"""The sub-agents' cards in the app, fed the core's real events (the UI renders events and
nothing else): a card replaces the ``agent`` call's tool card, its live line follows the
sub-agent's own events, none of them reaches the parent's reply, it unfolds to its
transcript, several update side by side, a sub-agent's own sub-agent nests inside it, and
a stopped turn stops them all. The approval modal says which sub-agent asks; ``/agents``
lists the agents. The end-to-end runs with two scripted models are in
test_agents_app.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from tests.fakes.mcp_server import ESCAPES, MARKUP
from tests.ui.kit import notes, send, until
from tests.ui.test_snapshots import app_for, settle
from tui_agent.core.events import (
    AgentFinished,
    AgentStarted,
    AgentTag,
    ApprovalDecided,
    ContextSize,
    Event,
    RoundUsage,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    Usage,
)
from tui_agent.core.permissions import PendingCall
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.widgets.agent_card import AgentCard
from tui_agent.ui.widgets.messages import AssistantMessage
from tui_agent.ui.widgets.tool_card import ToolCard

pytestmark = pytest.mark.slow
SIZE = (100, 40)
TASK = "Find where the config is loaded.\nThen list every caller."


def started(call_id: str, name: str = "explore", model: str = "openai/cheap",
            task: str = TASK) -> list[Event]:
    """The parent's ``agent`` call, approved, and its sub-agent starting."""
    return [ToolCallStarted(call_id, "tui-agent__agent", "tui-agent", "agent",
                            {"agent": name, "prompt": task}),
            ApprovalDecided(call_id, "auto", by="auto mode"),
            AgentStarted(call_id, name, model, task)]


def working(call_id: str, name: str = "explore", inner: str = "c1") -> list[Event]:
    """What the sub-agent of ``call_id`` does: it says something, calls a tool."""
    tag = AgentTag(call_id, name)
    return [ContextSize(1234, agent=tag),
            TextDelta("Looking at ", agent=tag), TextDelta("the loader.", agent=tag),
            ToolCallStarted(inner, "time__get_current_time", "time", "get_current_time",
                            {"timezone": "UTC"}, agent=tag),
            ApprovalDecided(inner, "auto", by="the auto list of time", agent=tag)]


def done(call_id: str, name: str = "explore", inner: str = "c1") -> list[Event]:
    tag = AgentTag(call_id, name)
    return [ToolResult(inner, False, "2026-11-29T13:00:00+00:00", 0.2, agent=tag),
            TextDelta("It is loaded in config/load.py.", agent=tag),
            AgentFinished(call_id, name, "done", Usage(1500, 300, 1800, 0.0021), 12.5, 2,
                          ("time__get_current_time",)),
            ToolResult(call_id, False, "It is loaded in config/load.py.", 12.6)]


async def feed(app: AgentApp, events: list[Event]) -> None:
    for event in events:
        await app.transcript.show(event)


def card(app: AgentApp, call_id: str) -> AgentCard:
    return app.transcript.agents.cards[call_id]


def text_of(widget: Static) -> str:
    return str(widget.render())


def live(app: AgentApp, call_id: str) -> str:
    return text_of(card(app, call_id).query_one(".live", Static))


def parent_replies(app: AgentApp) -> list[AssistantMessage]:
    """The replies in the parent's own stream (not inside any agent card)."""
    return [m for m in app.transcript.query(AssistantMessage)
            if not any(isinstance(a, AgentCard) for a in m.ancestors)]


async def started_app(pilot: Pilot[Any]) -> AgentApp:
    app = pilot.app
    assert isinstance(app, AgentApp)
    await settle(pilot)
    await app.transcript.user("look around")
    return app


@pytest.mark.anyio
async def test_a_card_follows_its_sub_agent_and_none_of_it_reaches_the_reply(
        tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app = await started_app(pilot)
        await feed(app, started("call_1"))
        assert not app.transcript.query(ToolCard), "the agent call's tool card is replaced"
        agent = card(app, "call_1")
        title = text_of(agent.query_one(".name", Static))
        assert title == "⧉ agent explore · openai/cheap"
        assert text_of(agent.query_one(".task", Static)) == "Find where the config is loaded."
        assert text_of(agent.query_one(".status", Static)) == "● running"
        await feed(app, working("call_1"))
        assert live(app, "call_1").startswith(
            "calling time · get_current_time · 1 tool · context 1.2k tokens · ")
        assert not parent_replies(app), "a sub-agent's text is not the parent's reply"
        # Each of its requests, as it ends: its tokens and cost so far, while it runs.
        await feed(app, [RoundUsage(Usage(1300, 40, 1340, 0.0012),
                                    agent=AgentTag("call_1", "explore"))])
        await until(pilot, lambda: live(app, "call_1").startswith(
            "calling time · get_current_time · 1 tool · 1.3k tokens · $0.0012 · "), 5,
            "the live count (the card's clock repaints it)")
        await feed(app, done("call_1"))
        assert text_of(agent.query_one(".status", Static)) == "✓ done"
        assert live(app, "call_1") == "1 tool · 1.8k tokens · $0.0021 · 2 turns · 12.5 s"
        assert not parent_replies(app)
        assert not agent.query_one(".body").display, "folded until asked"
        assert [c.status for c in agent.query(ToolCard)] == ["done"]


@pytest.mark.anyio
async def test_enter_unfolds_the_transcript_and_a_click_on_the_head_folds_it(
        tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app = await started_app(pilot)
        await feed(app, started("call_1") + working("call_1") + done("call_1"))
        agent = card(app, "call_1")
        agent.focus()
        await pilot.press("enter")
        await until(pilot, lambda: agent.query_one(".body").display, what="the transcript")
        replies = [m.source for m in agent.query(AssistantMessage)]
        assert replies == ["Looking at the loader.", "It is loaded in config/load.py."]
        call = agent.query_one(ToolCard)
        assert (call.server, call.tool, call.status) == ("time", "get_current_time", "done")
        assert call.region.height > 0, "the nested tool card is laid out"
        await pilot.click(agent.query_one(".head"))
        await until(pilot, lambda: not agent.query_one(".body").display, what="folded")


@pytest.mark.anyio
async def test_two_cards_update_side_by_side_and_an_inner_agent_nests(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app = await started_app(pilot)
        # Two calls of one reply, their events interleaved as the core yields them.
        await feed(app, started("call_1") + started("call_2", "review", "openai/strong"))
        one, two = working("call_1", inner="c1"), working("call_2", "review", inner="c1")
        for a, b in zip(one, two, strict=True):
            await feed(app, [a, b])
        assert card(app, "call_1").cards["c1"] is not card(app, "call_2").cards["c1"], \
            "the same call id from two models stays two calls"
        # call_2's sub-agent starts its own sub-agent: its events are tagged with the inner id.
        outer = AgentTag("call_2", "review")
        inner = AgentTag("call_9", "grep")
        await feed(app, [
            ToolCallStarted("call_9", "tui-agent__agent", "tui-agent", "agent",
                            {"agent": "grep", "prompt": "grep it"}, agent=outer),
            AgentStarted("call_9", "grep", "openai/local", "grep it", agent=outer),
            TextDelta("found 3", agent=inner),
        ])
        nested = card(app, "call_9")
        assert nested.parent is card(app, "call_2").body
        assert live(app, "call_2").startswith("calling tui-agent · agent · 2 tools")
        await feed(app, done("call_1"))
        assert card(app, "call_1").status == "done"
        assert card(app, "call_2").status == nested.status == "running"
        await feed(app, [AgentFinished("call_9", "grep", "max_turns", Usage(10, 5, 15, None),
                                       3.0, 8, (), "it was still calling tools at 8 turns",
                                       agent=outer),
                         ToolResult("call_9", False, "found 3 (stopped at 8 turns)", 3.1,
                                    agent=outer)])
        assert text_of(nested.query_one(".status", Static)) == "⚠ max turns"
        assert text_of(nested.query_one(".reason", Static)) == \
            "it was still calling tools at 8 turns"
        assert "cost unknown" in live(app, "call_9")
        assert live(app, "call_2").startswith("calling time · get_current_time · 2 tools")
        assert [m.source for m in nested.query(AssistantMessage)] == ["found 3"]
        assert not parent_replies(app)
        await feed(app, [TextDelta("Still rea", agent=outer)])
        await app.transcript.cancelled()  # esc: the turn stops, every sub-agent with it
        assert card(app, "call_2").status == "stopped"
        assert card(app, "call_2").cards["c1"].status == "cancelled"
        whole, cut = [m for m in card(app, "call_2").body.children
                      if isinstance(m, AssistantMessage)]
        assert (whole.source, whole.has_class("-incomplete")) == ("Looking at the loader.",
                                                                  False)
        assert (cut.source, cut.has_class("-incomplete")) == ("Still rea", True)
        assert card(app, "call_1").status == "done"


@pytest.mark.anyio
async def test_the_clock_ticks_while_it_runs_and_stops_at_the_end(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app = await started_app(pilot)
        await feed(app, started("call_1"))
        agent = card(app, "call_1")
        base = agent.started
        agent.now = lambda: base + 65.0
        await until(pilot, lambda: live(app, "call_1").endswith("1 m 05 s"), 10,
                    "the clock's next tick")
        await feed(app, done("call_1"))
        agent.now = lambda: base + 999.0
        await pilot.pause(0.7)  # a tick or more
        assert live(app, "call_1").endswith("12.5 s")


@pytest.mark.anyio
async def test_hostile_names_and_tasks_show_inert(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app = await started_app(pilot)
        await feed(app, started("call_1", f"x{MARKUP}", f"m{ESCAPES}", f"{MARKUP}{ESCAPES}"))
        agent = card(app, "call_1")
        for part in (".name", ".task"):
            shown = text_of(agent.query_one(part, Static))
            assert "\x1b" not in shown and "\x9b" not in shown
        assert "[link=" in text_of(agent.query_one(".name", Static)), "markup shown as text"


@pytest.mark.anyio
async def test_the_modal_says_which_sub_agent_asks(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        call = PendingCall("c1", "time__get_current_time", "time", "get_current_time", {},
                           agent=f"explore{MARKUP}{ESCAPES} (call_1)")
        await app.push_screen(ApprovalScreen(call))
        await until(pilot, lambda: app.screen.query(".asker"), what="the modal")
        shown = text_of(app.screen.query_one(".asker", Static))
        assert shown.startswith("asked by the sub-agent explore[link=")
        assert shown.endswith(" (call_1)")
        assert "\x1b" not in shown and "\x9b" not in shown
        plain = PendingCall("c2", "time__get_current_time", "time", "get_current_time", {})
        await pilot.press("y")
        await app.push_screen(ApprovalScreen(plain))
        await until(pilot, lambda: app.screen.query(".why"), what="the second modal")
        assert not app.screen.query(".asker"), "the conversation's own call names no agent"


@pytest.mark.anyio
async def test_a_waiting_call_of_a_sub_agent_is_marked_in_its_card(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app = await started_app(pilot)
        await feed(app, started("call_1") + [
            ToolCallStarted("c1", "fs__write", "fs", "write", {}, agent=AgentTag("call_1", "e")),
            ToolCallStarted("c1", "fs__write", "fs", "write", {})])  # the parent's own c1
        app.transcript.waiting("c1", "call_1")
        assert card(app, "call_1").cards["c1"].status == "waiting"
        assert app.transcript.cards["c1"].status == "pending"


@pytest.mark.anyio
async def test_agents_command_lists_the_built_in_agent_without_files(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send(pilot, app, "/agents")
        await until(pilot, lambda: any("agent" in n for n in notes(app)), 10, "the listing")
        said = next(n for n in notes(app) if "agent" in n)
        assert said.startswith("1 agent the model may start with the agent tool")
        assert "general (builtin): model inherit, tools all" in said


@pytest.mark.anyio
async def test_a_resumed_card_says_why_its_agent_did_not_finish(tmp_path: Path) -> None:
    """The session keeps ``agent_end``'s reason: a resumed card shows it as the live one
    did (inert: it can carry a server's or a model's words)."""
    from tui_agent.core.session import SavedAgent
    from tui_agent.ui.widgets.replayed import saved_agent

    why = f"it was still calling tools after 2 model round trips {MARKUP}{ESCAPES}"
    call = {"id": "call_9", "function": {"name": "tui-agent__agent",
                                         "arguments": '{"agent": "looper", "prompt": "loop"}'}}
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app = await started_app(pilot)
        resumed = saved_agent(call, SavedAgent("looper", "openai/cheap", "max_turns",
                                               turns=2, reason=why), None)
        await app.transcript.mount(resumed)
        await pilot.pause()
        shown = text_of(resumed.query_one(".reason", Static))
        assert shown.startswith("it was still calling tools after 2 model round trips")
        assert "[link=" in shown and "\x1b" not in shown and "\x9b" not in shown
        assert resumed.query_one(".reason", Static).display
