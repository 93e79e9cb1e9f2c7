"""``/model`` and ``/think`` in the app: a model chosen in the app gets the settings
``--model`` would give it (its ``[models]`` table, none of ``[model]``'s own), the
reasoning level outlives ``/model``, a model that cannot reason is said to, and the
picker opens at once and fills in what litellm knows of each model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import SIZE, make_app, ready, send, turn, until, write_config
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.picker import Picker
from tui_agent.ui.startup import Startup
from tui_agent.ui.widgets.messages import Note

pytestmark = [pytest.mark.anyio]

CHOICES = '\nchoices = ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"]\n'


def notes(app: AgentApp) -> list[str]:
    return [str(n.render()) for n in app.transcript.query(Note)]


async def noted(pilot: Pilot[Any], app: AgentApp, text: str) -> str:
    await until(pilot, lambda: any(text in n for n in notes(app)), what=f"a note {text!r}")
    return next(n for n in notes(app) if text in n)


def labels(picker: Picker) -> dict[str, str]:
    options = picker.query_one(OptionList)
    found = (options.get_option_at_index(i) for i in range(options.option_count))
    return {str(o.id): str(o.prompt) for o in found}


def picker_titled(app: AgentApp, start: str) -> Callable[[], bool]:
    return lambda: isinstance(app.screen, Picker) and app.screen.title_text.startswith(start)


async def test_model_and_think_use_the_models_own_settings(fake_llm: FakeLLM,
                                                           tmp_path: Path) -> None:
    with FakeLLM([Reply(text="from the other one")]) as other:
        config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra=f"""\
vision = true
context_window = 4096

[models."openai/other"]
api_base = "{other.base_url}"
api_key = "sk-test-key"
max_retries = 0
temperature = 0.4

[models."openai/fake-model"]
reasoning_effort = "minimal"
""")
        app = make_app(config)
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            await send(pilot, app, "/model openai/other")
            await noted(pilot, app, "model: openai/other (from the next turn)")
            used = app.backend.agent.llm.settings  # type: ignore[attr-defined]
            assert (used.api_base, used.vision, used.context_window) == (
                other.base_url, None, None)
            await turn(pilot, app, "hi")
            assert other.requests[0]["temperature"] == 0.4 and fake_llm.requests == []

            await send(pilot, app, "/think high")
            await noted(pilot, app, "reasoning: high (from the next turn); litellm does not "
                                    "know whether openai/other reasons")
            await send(pilot, app, "/model openai/fake-model")
            await noted(pilot, app, "model: openai/fake-model")
            used = app.backend.agent.llm.settings  # type: ignore[attr-defined]
            assert (used.reasoning_effort, used.vision, used.api_base) == (
                "high", True, fake_llm.base_url)
            await send(pilot, app, "/think default")
            await noted(pilot, app, "reasoning: minimal (from the next turn)")
            assert app.backend.agent.llm.settings.reasoning_effort == "minimal"  # type: ignore[attr-defined]
            await send(pilot, app, "/think max")
            await noted(pilot, app, "/think max: the level is one of none, minimal, low, "
                                    "medium, high or default")

            await send(pilot, app, "/model openai/gpt-4o")
            await send(pilot, app, "/think medium")
            await noted(pilot, app, "openai/gpt-4o cannot reason (as litellm knows it), so "
                                    "no level is sent to it")
            await send(pilot, app, "/think")
            await until(pilot, picker_titled(app, "Reasoning for the next turn"))
            assert "● medium" in labels(app.screen).values()  # type: ignore[arg-type]
            await pilot.press("escape")
            await app.action_quit()


async def test_model_picker_fills_in_facts_and_offers_the_level(fake_llm: FakeLLM,
                                                                tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          extra=CHOICES + '\n[models."openai/other"]\ntemperature = 0.4\n')
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/model")
        await until(pilot, picker_titled(app, "Model for the next turn"))
        picker = app.screen
        assert isinstance(picker, Picker)
        assert list(labels(picker)) == ["openai/fake-model", "openai/gpt-4o",
                                        "anthropic/claude-sonnet-4-5", "openai/other"]
        await until(pilot, lambda: "reasons" in labels(picker)["anthropic/claude-sonnet-4-5"]
                    and "not know" in labels(picker)["openai/other"], what="the facts")
        shown = labels(picker)
        assert shown["openai/gpt-4o"].endswith(
            "openai/gpt-4o                128k window · $2.5/$10 per M · vision")
        assert shown["anthropic/claude-sonnet-4-5"].endswith(
            "sonnet-4-5  200k window · $3/$15 per M · vision · reasons")
        assert shown["openai/fake-model"].startswith("● openai/fake-model")
        await pilot.press(*"sonnet")
        assert list(labels(picker)) == ["anthropic/claude-sonnet-4-5"]
        await pilot.press("down", "enter")
        await until(pilot, picker_titled(app, "Reasoning for anthropic/claude-sonnet-4-5"))
        await pilot.press(*"high", "enter")
        await noted(pilot, app, "reasoning: high (from the next turn)")
        assert app.backend.model_name == "anthropic/claude-sonnet-4-5"
        assert app.backend.reasoning_effort == "high"
        await app.action_quit()


async def test_a_reload_applies_the_chosen_models_new_table(fake_llm: FakeLLM,
                                                           tmp_path: Path) -> None:
    """A model picked with /model stays picked across a reload, with its table as the file
    now has it."""
    table = '\n[models."openai/other"]\ntemperature = {}\n'
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          extra=table.format(0.4))
    app = AgentApp(Startup(config=config, cwd=tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/model openai/other")
        await noted(pilot, app, "model: openai/other")
        assert app.backend.agent.llm.settings.temperature == 0.4  # type: ignore[attr-defined]
        write_config(config, base_url=fake_llm.base_url, extra=table.format(0.6))
        app.reload_config()
        await noted(pilot, app, "config reloaded: [models] applied")
        assert app.backend.model_name == "openai/other"
        used = app.backend.agent.llm.settings  # type: ignore[attr-defined]
        assert (used.temperature, used.api_base) == (0.6, fake_llm.base_url)
        await app.action_quit()


def test_snapshot_model_picker_with_facts(snap_compare: Callable[..., bool],
                                          tmp_path: Path) -> None:
    """The model picker once litellm's facts are in: window, price in and out, vision,
    reasoning, dim after each name; a model litellm does not know says so."""
    config = write_config(tmp_path / "c.toml", model="openai/snapshot-model",
                          extra=CHOICES + '\n[models."openai/other"]\ntemperature = 0.4\n')
    app = make_app(config)

    async def before(pilot: Pilot[Any]) -> None:
        await until(pilot, app.backend.ready.is_set)
        await send(pilot, app, "/model")
        await until(pilot, lambda: isinstance(app.screen, Picker)
                    and "not know" in labels(app.screen).get("openai/other", ""))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)
