"""A ``[models."NAME"]`` table that cannot be used (its key variable is unset) in the
app: the app starts with another model, ``/model NAME`` says what is wrong (file, line)
and keeps the model in use, the picker still opens, and a reload that breaks the table
of the model picked with ``/model`` keeps that model's settings with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from tests.fakes.llm_server import FakeLLM
from tests.ui.kit import SIZE, notes, send, until, write_config
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.picker import Picker
from tui_agent.ui.startup import Startup

pytestmark = [pytest.mark.anyio]

BROKEN = '\n[models."openai/broken"]\napi_key_env = "NOT_SET_ANYWHERE"\n'
OTHER = '\n[models."openai/other"]\ntemperature = 0.4\n'


def described(picker: object, name: str) -> str:
    assert isinstance(picker, Picker)
    options = picker.query_one(OptionList)
    found = (options.get_option_at_index(i) for i in range(options.option_count))
    return next((str(o.prompt) for o in found if o.id == name), "")


async def test_model_with_a_broken_table(fake_llm: FakeLLM, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          extra=BROKEN + OTHER)
    app = AgentApp(Startup(config=config, cwd=tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.loaded.is_set() and app.backend.ready.is_set())
        assert app.backend.model_name == "openai/fake-model"
        await send(pilot, app, "/model openai/broken")
        await until(pilot, lambda: any("cannot be used" in n for n in notes(app)))
        said = next(n for n in notes(app) if "cannot be used" in n)
        assert str(config) in said and 'models."openai/broken".api_key_env: the variable ' \
            "NOT_SET_ANYWHERE is not set" in said
        assert app.backend.model_name == "openai/fake-model"
        await send(pilot, app, "/model")
        await until(pilot, lambda: isinstance(app.screen, Picker) and "has an error" in
                    described(app.screen, "openai/broken"), what="the picker's facts")
        await pilot.press("escape")

        await send(pilot, app, "/model openai/other")
        await until(pilot, lambda: app.backend.model_name == "openai/other")
        write_config(config, base_url=fake_llm.base_url, extra=BROKEN + OTHER.replace(
            "temperature = 0.4", 'temperature = 0.6\napi_key_env = "NOT_SET_EITHER"'))
        app.reload_config()
        await until(pilot, lambda: any("keeps the settings it had" in n
                                       for n in notes(app)), what="the reload's warning")
        said = next(n for n in notes(app) if "keeps the settings it had" in n)
        assert said.startswith("openai/other keeps the settings it had") and \
            "NOT_SET_EITHER is not set" in said
        assert app.backend.model_name == "openai/other"
        assert app.backend.agent.llm.settings.temperature == 0.4  # type: ignore[attr-defined]
        await app.action_quit()
