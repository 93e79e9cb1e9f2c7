"""``/model`` and ``/think`` in the app: a model chosen in the app gets the settings
``--model`` would give it (its ``[models]`` table, none of ``[model]``'s own), the
reasoning level outlives ``/model``, a model that cannot reason is said to, and the
picker opens at once and fills in what litellm knows of each model."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import (
    SIZE,
    make_app,
    notes,
    ready,
    send,
    steady_cursor,
    turn,
    until,
    write_config,
)
from tui_agent.cli import build_parser, startup
from tui_agent.config import paths
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.picker import Picker
from tui_agent.ui.startup import Startup
from tui_agent.ui.widgets.messages import AssistantMessage
from tui_agent.ui.widgets.prompt import PromptInput

pytestmark = [pytest.mark.anyio]

CHOICES = '\nchoices = ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"]\n'


async def noted(pilot: Pilot[Any], app: AgentApp, text: str) -> str:
    await until(pilot, lambda: any(text in n for n in notes(app)), what=f"a note {text!r}")
    return next(n for n in notes(app) if text in n)


def labels(picker: Picker) -> dict[str, str]:
    options = picker.query_one(OptionList)
    found = (options.get_option_at_index(i) for i in range(options.option_count))
    return {str(o.id): str(o.prompt) for o in found}


def picker_titled(app: AgentApp, start: str) -> Callable[[], bool]:
    return lambda: isinstance(app.screen, Picker) and app.screen.title_text.startswith(start)


async def model_picker(pilot: Pilot[Any], app: AgentApp) -> Picker:
    """``/model``'s picker, once it is open."""
    await send(pilot, app, "/model")
    await until(pilot, picker_titled(app, "Model for the next turn"))
    picker = app.screen
    assert isinstance(picker, Picker)
    return picker


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
            await noted(pilot, app, 'reasoning: default, minimal from [models."openai/fake-model"] '
                                    "(from the next turn)")
            assert app.backend.agent.llm.settings.reasoning_effort == "minimal"  # type: ignore[attr-defined]
            await send(pilot, app, "/think max")
            await noted(pilot, app, "/think max: the level is one of none, minimal, low, "
                                    "medium, high or default")

            await send(pilot, app, "/model openai/gpt-4o")
            await send(pilot, app, "/think medium")
            await noted(pilot, app, "reasoning: medium, not sent: openai/gpt-4o does not "
                                    "reason (as litellm knows it); it applies to a model "
                                    "that reasons, from the next turn")
            await send(pilot, app, "/model anthropic/claude-sonnet-4-5")
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
        picker = await model_picker(pilot, app)
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
        # The configured one first, then litellm's other sonnets (suggested as you type).
        found = list(labels(picker))
        assert found[0] == "anthropic/claude-sonnet-4-5", found
        assert len(found) > 1 and all("sonnet" in name for name in found)
        await pilot.press("down")  # the arrows pick a row, and enter takes it (not "sonnet")
        assert picker.query_one(OptionList).highlighted == 1
        await pilot.press("up", "enter")
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
        app.screen.query_one(Input).cursor_blink = False  # screenshots are compared
        # The prompt under the modal: its lines drawn again unfocused (a busy machine's
        # screenshot kept a line cached while it had the focus, with its cursor).
        steady_cursor(app.chat.query_one(PromptInput))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def with_flags(config: Path, *flags: str) -> AgentApp:
    """The app as ``tui-agent --config CONFIG FLAGS...`` starts it."""
    return AgentApp(startup(build_parser().parse_args(["--config", str(config), *flags])))


async def test_think_says_a_model_that_cannot_reason_gets_no_level(fake_llm: FakeLLM,
                                                                   tmp_path: Path) -> None:
    """``/think`` on a model litellm says cannot reason names the level as not sent and
    offers no level picker (no level would reach it)."""
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url)
    app = with_flags(config, "--model", "openai/gpt-4o-mini", "--reasoning-effort", "high")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/think")
        said = await noted(pilot, app, "reasoning: high")
        assert said.startswith("reasoning: high, not sent: openai/gpt-4o-mini does not "
                               "reason (as litellm knows it); /think LEVEL still sets it")
        await pilot.pause()
        assert not isinstance(app.screen, Picker)
        await app.action_quit()


@pytest.mark.parametrize(("extra", "flags", "marked", "default"), [
    ("", ["--reasoning-effort", "medium"], "● medium", "default: medium from --reasoning-effort"),
    ('\n[models."anthropic/claude-sonnet-4-5"]\nreasoning_effort = "low"\n', [], "● low",
     'default: low from [models."anthropic/claude-sonnet-4-5"]'),
    ("", [], "● default: none set, the provider's own", "default: none set, the provider's own"),
])
async def test_think_picker_marks_the_level_in_force(fake_llm: FakeLLM, tmp_path: Path,
                                                     extra: str, flags: list[str],
                                                     marked: str, default: str) -> None:
    """The ``●`` is on the level the next turn asks for, wherever it was set, and
    "default" says what it means for the model in use; a level picked there is marked
    the next time, while "default" still names the setting."""
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra=extra)
    app = with_flags(config, "--model", "anthropic/claude-sonnet-4-5", *flags)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/think")
        await until(pilot, picker_titled(app, "Reasoning for the next turn"))
        shown = list(labels(app.screen).values())  # type: ignore[arg-type]
        assert marked in shown and sum(label.startswith("●") for label in shown) == 1
        assert shown[0].endswith(default)
        await pilot.press(*"high", "enter")
        await noted(pilot, app, "reasoning: high (from the next turn)")
        await send(pilot, app, "/think")
        await until(pilot, picker_titled(app, "Reasoning for the next turn"))
        shown = list(labels(app.screen).values())  # type: ignore[arg-type]
        assert "● high" in shown and shown[0].endswith(default)
        await pilot.press("escape")
        await app.action_quit()


async def test_model_picker_shows_the_windows_and_vision_the_config_sets(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A ``[models]`` table's ``context_window`` and ``vision`` are the model's facts in
    the picker: over litellm's for a model it knows, alone (and said to come from the
    config) for one it does not."""
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra="""
[models."openai/local-thing"]
context_window = 32768
vision = true

[models."openai/gpt-4o"]
context_window = 64000
""")
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        picker = await model_picker(pilot, app)
        await until(pilot, lambda: "window" in labels(picker)["openai/gpt-4o"]
                    and "window" in labels(picker)["openai/local-thing"], what="the facts")
        shown = labels(picker)
        assert shown["openai/local-thing"].endswith("32k window · vision · from your config")
        assert shown["openai/gpt-4o"].endswith("64k window · $2.5/$10 per M · vision")
        assert shown["openai/fake-model"].endswith("litellm does not know this model")
        await pilot.press("escape")
        await app.action_quit()


async def test_the_meter_shows_the_chosen_models_window_at_once(fake_llm: FakeLLM,
                                                                tmp_path: Path) -> None:
    """After ``/model X`` the context meter drops the old model's window and shows X's
    (litellm's, its table's, or none) before any request is sent to X."""
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra="""\
context_window = 4096

[models."openai/other"]
context_window = 32768
""")
    fake_llm.push(Reply(text="hello"))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await turn(pilot, app, "hi")

        def meter() -> str:
            return next(p for p in str(app.status.render()).split(" · ") if p.startswith("ctx"))

        def meter_is(text: str) -> bool:
            return meter() == text

        assert meter().endswith("/4.1k")
        counted = meter().removesuffix("/4.1k")
        for name, window in (("openai/gpt-4o", "/128k"), ("openai/other", "/32k"),
                             ("openai/not-a-model", "")):
            await send(pilot, app, f"/model {name}")
            await until(pilot, partial(meter_is, counted + window),
                        what=f"the meter of {name}")
        assert len(fake_llm.requests) == 1
        await app.action_quit()


async def test_typing_in_the_model_picker_finds_litellms_models(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new user with no key types part of a model's name: the picker finds it in
    litellm's catalogue, spelled as tui-agent needs it, with the key to set; choosing it
    works as for a configured model (a model that reasons gets the level step). Nothing
    is suggested before two characters are typed (the list stays the configured one)."""
    from tui_agent.core.llm.catalog import HOSTED

    for variable in HOSTED.values():
        monkeypatch.delenv(variable, raising=False)
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        picker = await model_picker(pilot, app)
        await until(pilot, lambda: bool(picker.suggestions), what="litellm's catalogue")
        await pilot.press("c")
        assert list(labels(picker)) == []  # "c" is in no configured name; too short to search
        await pilot.press(*"laude-son")
        found = labels(picker)
        assert "anthropic/claude-sonnet-4-5" in found, list(found)
        line = found["anthropic/claude-sonnet-4-5"]
        assert line.split() == ["anthropic/claude-sonnet-4-5", "set", "ANTHROPIC_API_KEY", "·",
                                "200k", "window", "·", "$3/$15", "per", "M", "·", "vision",
                                "·", "reasons"], line
        assert len(found) <= Picker.SUGGESTED
        options = picker.query_one(OptionList)
        # The key to set is drawn, not cut off with the end of a long line.
        key_ends = line.index("set ANTHROPIC_API_KEY") + len("set ANTHROPIC_API_KEY")
        assert key_ends <= options.scrollable_content_region.width, \
            (key_ends, options.scrollable_content_region.width)
        for _ in range(list(found).index("anthropic/claude-sonnet-4-5")):
            await pilot.press("down")
        assert options.highlighted_option is not None
        assert options.highlighted_option.id == "anthropic/claude-sonnet-4-5"
        await pilot.press("enter")
        await until(pilot, picker_titled(app, "Reasoning for anthropic/claude-sonnet-4-5"))
        await pilot.press("escape")
        await noted(pilot, app, "model: anthropic/claude-sonnet-4-5 (from the next turn)")
        assert app.backend.model_name == "anthropic/claude-sonnet-4-5"
        # Typed, then enter (the typed text is taken): litellm's name is pointed out.
        await send(pilot, app, "/model claude-son")
        said = await noted(pilot, app, "litellm knows no model 'claude-son'")
        assert "did you mean anthropic/claude-sonnet" in said
        await send(pilot, app, "/model gpt-4o")  # litellm knows it: nothing to point out
        await noted(pilot, app, "model: gpt-4o (from the next turn)")
        await send(pilot, app, "/model ollama/qwen")
        await noted(pilot, app, "model: ollama/qwen (from the next turn)")
        assert not any("'gpt-4o'" in n for n in notes(app))
        await app.action_quit()


async def test_model_with_a_url_talks_to_that_server(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``/model NAME URL`` (or the same typed in the picker) points the model at a server
    from inside the app, as ``--api-base`` does at the start; a second word that is not a
    URL is named and changes nothing."""
    fake_llm.push(Reply(text="from the first server"))
    with FakeLLM([Reply(text="from the local one"), Reply(text="again")]) as local:
        app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            await turn(pilot, app, "one")
            for wrong in ("openai/qwen localhost:8000", "openai/qwen http://:8000/v1",
                          "openai/qwen http://h:abc/v1", "openai/qwen http://[::1",
                          "http://localhost:8000/v1", "a b http://h/v1"):
                await send(pilot, app, f"/model {wrong}")
                said = await noted(pilot, app, f"'{wrong}' is not a model name")
                assert "http://localhost:8000/v1)" in said
            await send(pilot, app, "/model openai/qwen http://me:s3cret@h:1/v1")
            said = await noted(pilot, app, "model: openai/qwen at")
            assert "s3cret" not in said and "http://me:********@h:1/v1" in said
            await send(pilot, app, "/model openai/fake-model")
            assert app.backend.model_name == "openai/fake-model"
            await send(pilot, app, f"/model openai/qwen {local.base_url}")
            await noted(pilot, app, f"model: openai/qwen at {local.base_url} (from the next")
            await turn(pilot, app, "two")
            assert [r["model"] for r in local.requests] == ["qwen"]
            assert len(fake_llm.requests) == 1
            await send(pilot, app, "/model")
            await until(pilot, picker_titled(app, "Model for the next turn"))
            await pilot.press(*f"openai/qwen2 {local.base_url}", "enter")
            await noted(pilot, app, "model: openai/qwen2 at")
            await turn(pilot, app, "three")
            assert [r["model"] for r in local.requests] == ["qwen", "qwen2"]
            await send(pilot, app, "/model openai/qwen")  # its server stays, and is said
            await noted(pilot, app, f"model: openai/qwen at {local.base_url} (from the next")
            await app.action_quit()


async def test_model_url_credentials_are_masked_from_then_on(fake_llm: FakeLLM,
                                                             tmp_path: Path) -> None:
    """The credentials in ``/model NAME URL`` (a password, a token as the user name, a
    ``?api_key=``) join the secrets masked in the model's text, its errors, the session
    and the prompt history, as ``--api-base``'s do."""
    password, query_key = "s3cret-pass-77", "query-key-999"
    said = f"the server has {password} and {query_key}"
    with FakeLLM([Reply(text=said), Reply(status=401, error_message=f"bad: {said}")]) as local:
        app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            await send(pilot, app, f"/model openai/far http://me:{password}@127.0.0.1:9/v1"
                                   f"?api_key={query_key}")
            await noted(pilot, app, "model: openai/far at")
            await send(pilot, app, f"/model openai/qwen {local.base_url}")
            await noted(pilot, app, "model: openai/qwen at")
            assert {password, query_key} <= app.backend.settings.secrets
            await turn(pilot, app, "one")
            reply = list(app.transcript.query(AssistantMessage))[-1].source
            assert reply == "the server has *** and ***", reply
            await turn(pilot, app, "two")
            error = await noted(pilot, app, "bad: the server has")
            history = app.prompt_history.path
            await app.action_quit()
    assert password not in error and query_key not in error, error
    assert history is not None
    written = history.read_text(encoding="utf-8") + "".join(
        f.read_text(encoding="utf-8") for f in paths.sessions_dir().rglob("*.jsonl"))
    assert "/model openai/far http://me:***@127.0.0.1:9/v1?api_key=***" in written
    assert password not in written and query_key not in written, written


async def test_think_picker_opens_on_the_level_in_force_and_says_default(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """The level picker opens with the level in force highlighted (enter keeps it), not
    on its first row; picking "default" says "default" and what it means for the model."""
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url)
    app = with_flags(config, "--model", "anthropic/claude-sonnet-4-5",
                     "--reasoning-effort", "low")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/think")  # litellm's import first, in a worker: be patient
        await until(pilot, picker_titled(app, "Reasoning for the next turn"), timeout=120)
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        assert options.highlighted is not None
        assert options.get_option_at_index(options.highlighted).id == "low"
        # the arrows start from low: minimal, none, default
        await pilot.press("up", "up", "up", "enter")
        said = await noted(pilot, app, "reasoning: default")
        assert said == "reasoning: default, low from --reasoning-effort (from the next turn)"
        await app.action_quit()
