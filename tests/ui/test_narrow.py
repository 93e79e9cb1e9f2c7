"""At 80x24, the status bar and the ``/model`` picker keep what matters whole.

The status bar gives way part by part (the token count shortens, the servers go, the
provider prefix goes, ...) and never cuts a part in half, so the cached share stays
readable. The model picker keeps each choice on one line (its facts end in an ellipsis)
and fits its list between the input and the hint, so the last choices scroll into view
and the hint stays on screen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from tests.ui.kit import make_app, ready, send, steady_cursor, until, write_config
from tui_agent.core.events import ContextSize, Usage
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.picker import Picker
from tui_agent.ui.widgets.prompt import PromptInput
from tui_agent.ui.widgets.status import SEP, Part, ServerCount, fit

SMALL = (80, 24)
SONNET = "anthropic/claude-sonnet-4-5"
MANY = [SONNET, "openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-haiku-4-5",
        "gemini/gemini-2.5-pro", "gemini/gemini-2.5-flash", "openai/o3-mini",
        "anthropic/claude-opus-4-1", "deepseek/deepseek-chat", "openai/gpt-4.1",
        "openai/gpt-4.1-mini", "mistral/mistral-large-latest", "openai/unknown-model"]


def trial_bar(app: AgentApp, *, busy: bool = False) -> None:
    """The bar as the trial saw it: Sonnet, 3.9k of 200k, 33,170 tokens, 91% cached."""
    status = app.status
    status.model = SONNET
    status.context = ContextSize(3_900, 200_000, 160_000)
    status.usage = Usage(30_000, 3_170, 33_170, 0.0438, cache_read_tokens=27_300)
    if busy:
        status.servers = ServerCount(2, 3, 12, 1)
        status.code_mode = True
        status.activity = "working… (esc stops)"


def bar(app: AgentApp) -> str:
    return str(app.status.render())


@pytest.mark.anyio
async def test_the_status_bar_gives_way_part_by_part(tmp_path: Path) -> None:
    app = make_app(write_config(tmp_path / "c.toml", model=SONNET))
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot, app)
        trial_bar(app)
        await pilot.pause()
        assert bar(app) == f"{SONNET} · ctx 3.9k/200k · 33k tok · $0.0438 · cache 91%"
        trial_bar(app, busy=True)
        await pilot.pause()
        assert bar(app) == ("claude-sonnet-4-5 · ctx 3.9k/200k · $0.0438 · code · "
                            "working… (esc stops)")
        await pilot.resize_terminal(200, 24)
        await until(pilot, lambda: "33,170 tokens" in bar(app), what="the wide bar")
        assert bar(app) == (f"{SONNET} · ctx 3.9k/200k · 33,170 tokens · $0.0438 · "
                            "cache 91% · 2/3 servers, 12 tools (1 failed) · code mode · "
                            "working… (esc stops)")
        await pilot.resize_terminal(120, 24)
        await until(pilot, lambda: "33,170 tokens" not in bar(app), what="the bar to narrow")
        assert bar(app) == (f"{SONNET} · ctx 3.9k/200k · 33k tok · $0.0438 · cache 91% · "
                            "code mode · working… (esc stops)")
        await app.action_quit()


def test_no_part_is_ever_cut() -> None:
    """At every width each part is whole, in one of its own forms, and the bar fits as
    soon as what never gives way (the model's short name, the meter, the activity) does."""
    parts = [Part("model", (SONNET, "claude-sonnet-4-5")), Part("ctx", ("ctx 3.9k/200k",)),
             Part("tokens", ("33,170 tokens", "33k tok", "")), Part("cost", ("$0.0438",)),
             Part("cache", ("cache 91%", "")),
             Part("servers", ("2/3 servers, 12 tools (1 failed)", "1 server failed", "")),
             Part("code", ("code mode", "code")), Part("activity", ("working… (esc stops)",)),
             Part("config", ("⚠ config not applied (see the note)", "⚠ config not applied"))]
    forms = {p.key: set(p.forms) for p in parts}
    floor = len(SEP.join(["claude-sonnet-4-5", "ctx 3.9k/200k", "$0.0438", "code",
                          "working… (esc stops)", "⚠ config not applied"]))
    widths = []
    for width in range(20, 200):
        shown = fit(parts, width)
        assert all(p.forms[0] in forms[p.key] for p in shown)
        assert [p.key for p in shown] == [p.key for p in parts if p.key in
                                          {s.key for s in shown}]  # the order kept
        text = SEP.join(p.forms[0] for p in shown)
        assert len(text) <= max(width, floor)
        widths.append(len(shown))
    assert widths == sorted(widths)  # a wider bar never shows fewer parts


def many_models(tmp_path: Path) -> AgentApp:
    choices = ", ".join(f'"{m}"' for m in MANY[1:])
    return make_app(write_config(tmp_path / "c.toml", model=SONNET,
                                 extra=f"choices = [{choices}]\n"))


def facts_in(app: AgentApp) -> Callable[[], bool]:
    """Every choice's facts have arrived."""
    def done() -> bool:
        screen = app.screen
        return isinstance(screen, Picker) and set(screen.details) >= set(MANY)
    return done


@pytest.mark.anyio
async def test_the_model_picker_fits_80x24(tmp_path: Path) -> None:
    app = many_models(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/model")
        await until(pilot, facts_in(app), what="the facts")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, Picker)
        options = picker.query_one(OptionList)
        assert options.virtual_size.height == options.option_count == len(MANY)  # a line each
        box = picker.query_one("#box").content_region
        hint = picker.query_one(".hint", Static).region
        assert box.contains_region(hint) and box.contains_region(options.region)
        assert hint.y >= options.region.bottom  # below the list, not over it
        await pilot.press("tab", "end")
        assert options.highlighted == len(MANY) - 1
        await pilot.pause()
        shown = options.scrollable_content_region.height  # the last choice in view
        assert options.scroll_offset.y + shown == len(MANY)
        await pilot.press("escape")
        await app.action_quit()


def test_snapshot_status_bar_80x24(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    """At 80x24 the trial's status bar: the token count shortened and the servers part
    dropped, so the model, the meter, the cost and the cached share all show whole."""
    app = make_app(write_config(tmp_path / "c.toml", model=SONNET))

    async def before(pilot: Pilot[Any]) -> None:
        await until(pilot, app.backend.ready.is_set)
        steady_cursor(app.chat.query_one(PromptInput))  # screenshots are compared
        trial_bar(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SMALL, run_before=before)


def test_snapshot_model_picker_80x24(snap_compare: Callable[..., bool],
                                     tmp_path: Path) -> None:
    """At 80x24 the model picker with thirteen choices: one line each, the facts cut with an
    ellipsis, the list scrolling inside the box and the hint below it."""
    app = many_models(tmp_path)

    async def before(pilot: Pilot[Any]) -> None:
        await until(pilot, app.backend.ready.is_set)
        await send(pilot, app, "/model")
        await until(pilot, facts_in(app))
        app.screen.query_one(Input).cursor_blink = False  # screenshots are compared
        # The prompt under the modal: its lines drawn again unfocused (a busy machine's
        # screenshot kept a line cached while it had the focus, with its cursor).
        steady_cursor(app.chat.query_one(PromptInput))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SMALL, run_before=before)


@pytest.mark.anyio
async def test_the_welcome_opens_at_its_title_on_a_short_terminal(tmp_path: Path) -> None:
    """60x20, no model: the first-run panel is taller than the view; it opens at its top
    (the anchored view opened at its end, the title off screen), and the answer to the
    first message sent (there is no model yet) is brought into view."""
    app = make_app(write_config(tmp_path / "c.toml", model=None))
    async with app.run_test(size=(60, 20)) as pilot:
        await ready(pilot, app)
        transcript = app.transcript
        await until(pilot, lambda: transcript.query(".welcome") and transcript.max_scroll_y > 0,
                    what="a welcome taller than the view")
        await pilot.pause(0.2)
        assert transcript.scroll_y == 0
        await send(pilot, app, "hello?")
        await until(pilot, lambda: transcript.scroll_y >= transcript.max_scroll_y - 1
                    and transcript.max_scroll_y > 15, what="the note in view")
        await app.action_quit()
