"""The permission modes in the app, against litellm, the scripted LLM server and our MCP
server (tests/fakes/mcp_server.py: ``add`` is annotated ``readOnlyHint``, ``echo`` is
not). Shift+tab cycles default → plan → auto → default and the status bar follows; in
plan mode the read-only tool runs, the changing one is refused without a question (its
card says ``denied · plan mode``) and the model reads that it is in plan mode and the
refusal; leaving plan mode shows the plan and offers to carry it out; in auto mode the
changing tool runs without a question and its card says so; a resumed conversation shows
what decided each call. ``/mode`` sets a mode by name or from a picker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.ui.kit import SIZE, finish, make_app, noted, notes, ready, send, shown, until
from tests.ui.kit import write_config as app_config
from tui_agent.core.permissions.modes import PLAN_PROMPT, PLAN_REFUSAL
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.picker import Picker
from tui_agent.ui.widgets.messages import PlanMessage, UserMessage
from tui_agent.ui.widgets.prompt import PromptInput
from tui_agent.ui.widgets.tool_card import ToolCard

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


MODED = ("plan", "auto")
"""How the bar starts in plan and auto mode (the default mode says nothing)."""


def config(tmp_path: Path, base_url: str) -> Path:
    return app_config(tmp_path / "c.toml", base_url=base_url, servers={"t": []},
                      extra='auto = ["add"]\n')  # in [servers.t], the last table


def bar(app: AgentApp) -> str:
    return str(app.status.render())


def mode_of(app: AgentApp) -> str:
    """The mode now (a function: mypy narrows an attribute it saw compared once)."""
    return app.backend.policy.mode


def by_lines(card: ToolCard) -> list[str]:
    return [str(s.render()) for s in card.query(".by")]


async def test_shift_tab_plan_then_auto_end_to_end(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("t__add", {"a": 1, "b": 2}, id="r"),
                                    FakeToolCall("t__echo", {"text": "3"}, id="w")]),
                  Reply(text="**The plan**: echo 3."),
                  Reply(tool_calls=[FakeToolCall("t__echo", {"text": "3"}, id="w2")]),
                  Reply(text="Said 3."))
    app = make_app(config(tmp_path, fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one(PromptInput)
        assert app.backend.policy.mode == "default" and not bar(app).startswith(MODED)
        await pilot.press("shift+tab")
        await until(pilot, lambda: app.backend.policy.mode == "plan", what="plan mode")
        assert bar(app).startswith("plan mode") and prompt.has_focus

        await send(pilot, app, "add 1 and 2, then say it")
        await until(pilot, lambda: app.turns_ended == 1, what="the plan turn", timeout=60)
        assert len(app.screen_stack) == 1  # nothing was asked
        cards = {c.call_id: c for c in app.transcript.query(ToolCard)}
        assert cards["r"].status == "done" and by_lines(cards["r"]) == [
            "auto · the auto list of t"]
        assert cards["w"].status == "denied" and cards["w"]._label == "⊘ denied · plan mode"
        assert by_lines(cards["w"]) == []  # plan mode's refusal is words for the model
        sent = fake_llm.requests[0]["messages"][-1]["content"]
        assert sent.startswith("add 1 and 2, then say it") and PLAN_PROMPT in sent
        assert PLAN_PROMPT not in str(app.transcript.query(UserMessage).last().render())
        answers = {m["tool_call_id"]: m["content"] for m in fake_llm.requests[1]["messages"]
                   if m["role"] == "tool"}
        assert answers["r"] == "3" and PLAN_REFUSAL in answers["w"]

        await pilot.press("shift+tab")  # plan → auto: the plan is shown, ready to go
        await until(pilot, lambda: bool(app.transcript.query(PlanMessage)), what="the plan")
        assert app.transcript.query_one(PlanMessage).source == "**The plan**: echo 3."
        assert prompt.text == "Carry out the plan."
        assert bar(app).startswith("auto: tools run without asking")
        await pilot.press("enter")
        await until(pilot, lambda: app.turns_ended == 2, what="the auto turn", timeout=60)
        assert len(app.screen_stack) == 1
        card = next(c for c in app.transcript.query(ToolCard) if c.call_id == "w2")
        assert card.status == "done" and by_lines(card) == ["auto · auto mode"]
        assert fake_llm.requests[2]["messages"][-1]["content"] == "Carry out the plan."
        assert fake_llm.requests[3]["messages"][-1]["content"] == "3"

        await pilot.press("shift+tab")
        await until(pilot, lambda: app.backend.policy.mode == "default", what="default")
        assert not bar(app).startswith(MODED) and len(app.transcript.query(PlanMessage)) == 1

        session = app.backend.agent.session
        assert session is not None
        await app.resume(session.id)  # the session file kept what decided each call
        await until(pilot, lambda: any("resumed" in n for n in notes(app)), what="resumed")
        await until(pilot, lambda: len(app.transcript.query(ToolCard)) == 3, what="cards")
        while app.transcript.query("#earlier"):  # the first message, folded above
            await app.transcript.show_earlier()
        await pilot.pause(0.2)
        cards = {c.call_id: c for c in app.transcript.query(ToolCard)}
        assert by_lines(cards["r"]) == ["auto · the auto list of t"]
        assert cards["w"]._label == "⊘ denied · plan mode"
        assert by_lines(cards["w2"]) == ["auto · auto mode"]
        shown_user = [str(m.render()) for m in app.transcript.query(UserMessage)]
        assert shown_user == ["add 1 and 2, then say it", "Carry out the plan."], shown_user
        await finish(app)


async def test_mode_command_by_name_and_from_the_picker(tmp_path: Path) -> None:
    app = make_app(app_config(tmp_path / "c.toml", extra='[permissions]\n'
                                                         'default_mode = "auto"\n'))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        policy = app.backend.policy
        assert policy.mode == "auto" and bar(app).startswith("auto:")
        await send(pilot, app, "/mode plan")
        said = await noted(pilot, app, "plan mode:")
        assert "read-only" in said and mode_of(app) == "plan"
        await send(pilot, app, "/mode yolo")
        await noted(pilot, app, "/mode yolo: not a mode (default, plan or auto)")
        assert mode_of(app) == "plan"
        await send(pilot, app, "/mode")
        picker = await shown(pilot, app, Picker, "the mode picker")
        await pilot.press("d", "e", "f", "enter")
        await until(pilot, lambda: app.screen is not picker, what="the picker to close")
        await until(pilot, lambda: app.backend.policy.mode == "default", what="default")
        assert not bar(app).startswith(MODED)
        assert not app.transcript.query(PlanMessage)  # no turn in plan mode: no plan
        await finish(app)
