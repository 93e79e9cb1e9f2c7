"""The app's flows through the pilot, against the real path: litellm talking to the
scripted LLM server, real MCP servers over stdio, the config file on disk."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, SelectionList, Static

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.ui.kit import (
    SIZE,
    finish,
    make_app,
    notices,
    open_servers,
    ready,
    send,
    shown,
    turn,
    until,
    write_config,
)
from tui_agent.config import paths
from tui_agent.core.filters import ToolFilter
from tui_agent.core.session import SessionStore, SessionWriter, load
from tui_agent.tools.metrics import metrics_path
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.screens.servers import ServersScreen
from tui_agent.ui.screens.tools import ToolsScreen
from tui_agent.ui.widgets.messages import AssistantMessage, Note, UserMessage
from tui_agent.ui.widgets.tool_card import ToolCard

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
Then = Callable[[Pilot[Any], AgentApp], Awaitable[None]]


def tool_reply(*calls: FakeToolCall) -> Reply:
    return Reply(tool_calls=list(calls))


async def test_send_and_stream(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="# Title\n\n- one\n- two\n\n```py\nprint(1)\n```\n", chunk_chars=3))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await turn(pilot, app, "hello")
        replies = list(app.transcript.query(AssistantMessage))
        assert [r.source for r in replies] == ["# Title\n\n- one\n- two\n\n```py\nprint(1)\n```\n"]
        assert [str(u.render()) for u in app.transcript.query(UserMessage)] == ["hello"]
        assert fake_llm.requests[0]["messages"][-1] == {"role": "user", "content": "hello"}
        assert app.status.usage is not None and app.status.usage.total_tokens > 0
        await finish(app)


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_escape_cancels_mid_stream(fake_llm: FakeLLM, tmp_path: Path, key: str) -> None:
    """Esc stops the reply in flight; so does ctrl+c, which a terminal's user presses
    (with nothing running it only says how to quit: see the next test)."""
    fake_llm.push(Reply(text="word " * 400, chunk_chars=5, delay=0.02))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)  # sent before the backend is up, the prompt waited on it
        before = app.turns_ended
        await send(pilot, app, "talk")
        # 60 s: a bound, not a speed test (20 s ran out twice next to a busy suite)
        await until(pilot, lambda: any(r.source for r in app.transcript.query(AssistantMessage)),
                    60, "the first words")
        await pilot.press(key)
        await until(pilot, lambda: app.turns_ended > before, what="the stop")
        reply = app.transcript.query_one(AssistantMessage)
        assert reply.has_class("-incomplete")
        assert 0 < len(reply.source) < len("word " * 400)
        assert any("stopped" in str(n.render()) for n in app.transcript.query(Note))
        session = app.backend.agent.session
        assert session is not None
        saved = load(session.path)
        assert saved.entries[-1].incomplete and saved.entries[-1].message["role"] == "assistant"
        await finish(app)


async def test_ctrl_c_with_nothing_running_says_how_to_quit(fake_llm: FakeLLM,
                                                            tmp_path: Path) -> None:
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: any("ctrl+q" in n and "quit" in n for n in notices(app)),
                    what="the hint")
        assert app.is_running
        await finish(app)


async def approve_flow(fake_llm: FakeLLM, tmp_path: Path, keys: list[str],
                       then: Then | None = None
                       ) -> tuple[ToolCard, Path, list[dict[str, object]]]:
    """The model calls r__echo; answer the modal with ``keys``; return the card, the config
    file and the messages of the request that followed. ``then`` runs after the turn."""
    fake_llm.push(tool_reply(FakeToolCall("r__echo", {"text": "hi there"}, id="c1")),
                  Reply(text="ok"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, servers={"r": []})
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        before = app.turns_ended
        await send(pilot, app, "echo something")
        await shown(pilot, app, ApprovalScreen, "the modal")
        await pilot.press(*keys)
        await until(pilot, lambda: app.turns_ended > before, what="the turn to end")
        card = app.transcript.cards["c1"]
        messages = fake_llm.requests[-1]["messages"]
        if then is not None:
            await then(pilot, app)
        await finish(app)
    return card, config, messages


async def test_the_servers_screen_and_the_session_keep_call_metrics(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    async def servers_screen(pilot: Pilot[Any], app: AgentApp) -> None:
        session = app.backend.agent.session
        assert session is not None
        kept = json.loads(metrics_path(session.path).read_text())["servers"]["r"]
        assert (kept["calls"], kept["errors"], kept["tools"]["echo"]["bytes"]) == (1, 0, 8)
        await pilot.press("ctrl+s")
        await shown(pilot, app, ServersScreen, "/servers")
        detail = str(app.screen.query_one("#detail", Static).render())
        assert "calls: 1 call · 0 errors · 0 timeouts · p50 " in detail
        assert "  echo: 1 call ·" in detail and "8 B" in detail

    card, _, _ = await approve_flow(fake_llm, tmp_path, ["y"], servers_screen)
    assert card.status == "done"


async def test_approve_once_runs_the_tool(fake_llm: FakeLLM, tmp_path: Path) -> None:
    card, config, messages = await approve_flow(fake_llm, tmp_path, ["y"])
    assert card.status == "done"
    assert messages[-1]["content"] == "hi there"
    assert "auto" not in tomllib.loads(config.read_text())["servers"]["r"]


async def test_always_allow_writes_the_config_keeping_comments(fake_llm: FakeLLM,
                                                                 tmp_path: Path) -> None:
    card, config, _ = await approve_flow(fake_llm, tmp_path, ["a"])
    assert card.status == "done"
    text = config.read_text()
    assert tomllib.loads(text)["servers"]["r"]["auto"] == ["echo"]
    assert "# written by the UI tests; comments must survive" in text
    assert "[servers.r]  # a test server" in text
    pinned = json.loads((paths.state_dir() / "approvals.json").read_text())
    assert pinned["r"]["echo"]["always"] is True


async def test_deny(fake_llm: FakeLLM, tmp_path: Path) -> None:
    card, _, messages = await approve_flow(fake_llm, tmp_path, ["n"])
    assert card.status == "denied"
    assert str(messages[-1]["content"]).startswith("The user denied this call of r__echo.")


async def test_deny_with_a_reason_reaches_the_model(fake_llm: FakeLLM, tmp_path: Path) -> None:
    card, _, messages = await approve_flow(
        fake_llm, tmp_path, ["r", *"use the other tool", "enter"])
    assert card.status == "denied" and card.reason == "use the other tool"
    assert str(messages[-1]["content"]) == (
        "The user denied this call of r__echo. Reason: use the other tool. "
        "Do not retry it unchanged.")


async def test_two_pending_calls_are_asked_in_order(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(tool_reply(FakeToolCall("r__echo", {"text": "first"}, id="a"),
                             FakeToolCall("r__echo", {"text": "second"}, id="b")),
                  Reply(text="both done"))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                                servers={"r": []}))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "two")
        asked = []
        for answer in ("y", "n"):
            screen = await shown(pilot, app, ApprovalScreen, "a modal")
            asked.append(screen.call.arguments["text"])
            assert app.transcript.cards[screen.call.id].status == "waiting"
            await pilot.press(answer)

            def closed(asked_on: ApprovalScreen = screen) -> bool:
                return app.screen is not asked_on

            await until(pilot, closed, what="the modal to close")
        await until(pilot, lambda: app.turns_ended == 1)
        assert asked == ["first", "second"]
        assert app.transcript.cards["a"].status == "done"
        assert app.transcript.cards["b"].status == "denied"
        await finish(app)


async def test_server_failing_at_start_shows_in_the_servers_screen(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", servers={"good": [], "bad": ["--slow-start", "x"]})
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        screen = await open_servers(pilot, app)
        states = {s.name: s.state for s in app.backend.statuses()}
        assert states == {"good": "connected", "bad": "failed"}
        await pilot.press("down")
        assert screen.selected() == "bad"
        detail = str(screen.query_one("#detail").render())
        assert "failed" in detail and "last error:" in detail
        assert "invalid float value" in detail  # the server's own stderr, from its tail
        assert "1/2 servers" in str(app.status.render())
        await pilot.press("escape")
        await finish(app)


async def test_model_switch_applies_to_the_next_turn(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="from the first"), Reply(text="from the second"))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await turn(pilot, app, "one")
        await send(pilot, app, "/model")
        await until(pilot, lambda: app.screen.__class__.__name__ == "Picker")
        await pilot.press(*"openai/other-model", "enter")
        await until(pilot, lambda: app.status.model == "openai/other-model")
        await turn(pilot, app, "two")
        assert [r["model"] for r in fake_llm.requests] == ["fake-model", "other-model"]
        await finish(app)


async def test_resume_shows_the_saved_conversation(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="first answer"), Reply(text="second answer"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url)
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await turn(pilot, app, "first question")
        await finish(app)
    saved = SessionStore(paths.sessions_dir()).latest()
    assert saved is not None
    again = make_app(config, resume=load(saved).id)
    async with again.run_test(size=SIZE) as pilot:
        # Markdown takes its source when it mounts: wait for the text, not only the widget.
        await until(pilot, lambda: [m.source for m in again.transcript.query(AssistantMessage)]
                    == ["first answer"], what="the replay")
        await turn(pilot, again, "second question")
        sent = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] != "system"]
        assert sent == ["first question", "first answer", "second question"]
        await finish(again)


async def test_a_script_card_nests_its_calls_and_s_approves_the_rest(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    code = ('total = r.add(a=1, b=2)\n'  # add is read-only: s may approve it ahead
            'result = [r.echo(text=str(total)), r.add(a=total, b=1)]')
    fake_llm.push(tool_reply(FakeToolCall("executeToolCode", {"code": code}, id="s1")),
                  Reply(text="script done"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, servers={"r": []},
                          extra='[code_mode]\nenabled = true\n')
    config.write_text(config.read_text().replace('startup_timeout = 20',
                                                 'startup_timeout = 20\nauto = ["echo"]'))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "run a script")
        screen = await shown(pilot, app, ApprovalScreen, "a modal")
        assert screen.call.parent == "s1" and screen.call.arguments == {"a": 1, "b": 2}
        assert "r.echo" in screen.call.script
        await pilot.press("s")
        await until(pilot, lambda: app.turns_ended == 1)
        assert not isinstance(app.screen, ApprovalScreen)  # asked once for the whole run
        cards = app.transcript.cards
        script = cards["s1"]
        assert script.script == code and script.status == "done"
        kids = list(script.query_one(".kids").children)
        assert [k.call_id for k in kids] == ["s1.1", "s1.2", "s1.3"]  # type: ignore[attr-defined]
        assert all(cards[k].status == "done" for k in ("s1.1", "s1.2", "s1.3"))
        assert "uses r.add, r.echo" in str(script.query_one(".uses").render())
        await finish(app)


async def test_the_demo_tour_ends_with_a_code_mode_script(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole offline tour: streamed intro, save_note asks (y), list_notes runs by
    itself, then /code and a script whose save_note asks with the script beside it."""
    from functools import partial

    from tui_agent.config import Config, Settings
    from tui_agent.demo import demo_settings, model
    from tui_agent.ui.app import AgentApp
    from tui_agent.wiring.runtime import Options

    # The tour's text at once, as ScriptedTour's docstring asks of tests that do not watch
    # the stream (test_demo_flow does): a word every 20 ms is a screen update per word,
    # seconds of CPU over the tour's five replies.
    monkeypatch.setattr(model, "ScriptedTour", partial(model.ScriptedTour, pace=0))
    notes = tmp_path / "notes"
    app = AgentApp(Options(demo_settings(notes, Settings(Config())), demo=True))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "hello")
        await shown(pilot, app, ApprovalScreen, "save_note")
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended == 1, timeout=60)
        assert (notes / "tui-agent-tour.md").exists()
        await turn(pilot, app, "script")
        assert "Code mode is off" in app.backend.agent.messages[-1]["content"]
        await send(pilot, app, "/code")
        await until(pilot, lambda: app.status.code_mode)
        await send(pilot, app, "script")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=60,
                    what="the script's save_note")
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert screen.call.tool == "save_note" and "word_count" in screen.call.script
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended == 3, timeout=60)
        script = next(c for c in app.transcript.cards.values() if c.script is not None)
        assert script.status == "done"
        assert [app.transcript.cards[k].tool for k in
                [c.call_id for c in script.query(ToolCard) if c is not script]] == [
            "list_notes", "read_note", "word_count", "save_note"]
        assert '{"tui-agent-tour":12}' in (notes / "word-counts.md").read_text()
        assert app.backend.agent.messages[-1]["content"].startswith("That is the tour.")
        await finish(app)


async def test_a_long_resumed_conversation_shows_a_screen_then_earlier_pages(
        tmp_path: Path) -> None:
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    writer = SessionWriter.create(store / "long.jsonl", {"model": "x"})
    for i in range(100):
        writer.message({"role": "user", "content": f"question {i}"}, sync=False)
        writer.message({"role": "assistant", "content": f"## Answer {i}\n\n" + "line\n" * 8},
                       sync=False)
    writer.close()
    app = make_app(write_config(tmp_path / "c.toml"), resume=writer.id)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await until(pilot, lambda: "resumed" in " ".join(
            str(n.render()) for n in transcript.query(Note)), what="the replay")
        await pilot.pause()
        shown = len(transcript.query(UserMessage))
        assert 1 <= shown <= 6  # a screenful, not the whole page
        assert transcript.max_scroll_y > 0  # and it does fill the screen
        assert transcript.query_one("#earlier")
        top = next(c for c in transcript.children if c.id != "earlier")
        transcript.scroll_home(animate=False)  # reaching the top brings the page before
        await until(pilot, lambda: len(transcript.query(UserMessage)) > shown,
                    what="the earlier page")
        await pilot.pause()
        assert len(transcript.query(UserMessage)) == shown + 6  # PAGE messages: 6 pairs
        assert transcript.scroll_y > 0  # the view stayed at what was on top
        assert abs(top.region.y - transcript.region.y) <= 2
        transcript.query_one("#earlier", Button).press()  # the button does the same
        await until(pilot, lambda: len(transcript.query(UserMessage)) == shown + 12,
                    what="the page the button asked for")


async def test_earlier_pages_asked_for_twice_at_once_lose_nothing(tmp_path: Path) -> None:
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    writer = SessionWriter.create(store / "long.jsonl", {"model": "x"})
    for i in range(60):
        writer.message({"role": "user", "content": f"question {i}"}, sync=False)
        writer.message({"role": "assistant", "content": f"answer {i}"}, sync=False)
    writer.close()
    app = make_app(write_config(tmp_path / "c.toml"), resume=writer.id)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await until(pilot, lambda: transcript.query("#earlier"), what="the replay")
        await pilot.pause()
        for _ in range(3):  # the top reached and the button pressed, all at once
            transcript.scroll_home(animate=False)
            transcript.query_one("#earlier", Button).press()
            await pilot.pause()
            transcript.scroll_end(animate=False)
            await until(pilot, lambda: not transcript._loading, what="the page")
        asked = [str(m.render()) for m in transcript.query(UserMessage)]
        numbers = [int(text.split()[-1]) for text in asked]
        assert numbers == list(range(numbers[0], 60)), numbers  # contiguous, to the end
        assert len(numbers) > 6


async def test_tools_screen_switches_tools_for_this_conversation(fake_llm: FakeLLM,
                                                                 tmp_path: Path) -> None:
    """/tools: switching a tool off takes it from the next request; switching its server
    off takes them all; /new starts again from the command line's filter."""
    fake_llm.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                                servers={"a": []}),
                   tool_filter=ToolFilter(exclude_tools=("crash*",)))

    def offered(request: int) -> list[str]:
        return sorted(t["function"]["name"] for t in fake_llm.requests[request].get("tools", []))

    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/tools")
        await shown(pilot, app, ToolsScreen, "/tools")
        options = app.screen.query_one(SelectionList)
        values = [options.get_option_at_index(i).value for i in range(options.option_count)]
        assert values[0] == "a" and "a__echo" in values
        assert "a__crash" not in values, "what the command line left out is not offered"
        options.highlighted = values.index("a__echo")
        await pilot.press("space")
        await pilot.press("escape")
        await turn(pilot, app, "first")
        assert "a__echo" not in offered(0) and "a__add" in offered(0)
        assert "a__crash" not in offered(0)

        await send(pilot, app, "/tools")
        await shown(pilot, app, ToolsScreen, "/tools")
        options = app.screen.query_one(SelectionList)
        assert "a__echo" not in options.selected, "the switch is remembered meanwhile"
        options.highlighted = 0
        await pilot.press("space")
        await pilot.press("escape")
        await turn(pilot, app, "second")
        assert "tools" not in fake_llm.requests[1] or offered(1) == []

        await send(pilot, app, "/new")
        await turn(pilot, app, "third")
        assert "a__echo" in offered(2) and "a__crash" not in offered(2)
        await finish(app)


async def test_secrets_echoed_by_the_model_or_a_server_are_masked_on_screen(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """The config's api_key, streamed by the model in pieces and echoed back by a tool,
    shows as *** in the reply, the card's arguments and its result."""
    fake_llm.push(tool_reply(FakeToolCall("a__echo", {"text": "key sk-test-key"}, id="k1")),
                  Reply(text="your key is sk-test-key, keep it", chunk_chars=3))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          servers={"a": []}, extra='auto = ["echo"]\n')
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await turn(pilot, app, "echo my key")
        reply = list(app.transcript.query(AssistantMessage))[-1]
        assert reply.source == "your key is ***, keep it"
        card = app.transcript.query_one(ToolCard)
        assert card.arguments == {"text": "key ***"}
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "sk-test-key" not in screen and "key ***" in screen
        await finish(app)


async def test_always_with_these_arguments_writes_a_rule_keeping_comments(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``w`` answers "always allow this tool with these arguments": an allow rule in the
    user's config (its comments kept), in force at once, so the same call runs unasked
    while another value asks; ``a`` stays "this tool" (the server's auto list)."""
    user = paths.default_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("# my own settings\n[permissions]  # rules\nallow = [\n"
                    '  "mcp__git__*",  # git everywhere\n]\n')

    async def again(pilot: Pilot[Any], app: AgentApp) -> None:
        fake_llm.push(tool_reply(FakeToolCall("r__echo", {"text": "hi there"}, id="c2")),
                      Reply(text="ok"),
                      tool_reply(FakeToolCall("r__echo", {"text": "other"}, id="c3")))
        before = app.turns_ended
        await send(pilot, app, "again")
        await until(pilot, lambda: app.turns_ended > before, what="the unasked turn")
        assert app.transcript.cards["c2"].status == "done"
        await send(pilot, app, "and another")
        await shown(pilot, app, ApprovalScreen, "the modal for another value")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen) and modal.rule == \
            'mcp__r__echo(text=other)'
        await pilot.press("n")

    card, config, _ = await approve_flow(fake_llm, tmp_path, ["w"], then=again)
    assert card.status == "done"
    text = user.read_text()
    assert tomllib.loads(text)["permissions"]["allow"] == [
        "mcp__git__*", "mcp__r__echo(text=hi there)"]
    assert "# my own settings" in text and "# git everywhere" in text
    assert "auto" not in tomllib.loads(config.read_text())["servers"]["r"]
