"""Per-model settings: ``[models."NAME"]`` tables, the one resolution every way of
choosing a model goes through (``[model] name``, ``--model``, ``/model``,
``sampling_model``, a reload), the trust rule for a project's endpoint keys, ``config
--show``, and ``--reasoning-effort``."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_media import png
from tui_agent.cli import main
from tui_agent.config import ConfigError, ModelSettings, load
from tui_agent.config.model_choice import ModelFlags, provider, resolve


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def quiet_stdin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_resolution_rules() -> None:
    """[model]'s own keys stay with its model, its endpoint stays within its provider, the
    model's table applies last, then the flags."""
    base = ModelSettings(name="anthropic/claude-a", api_base="http://a", api_key="k-a",
                         vision=True, audio=True, context_window=9000, temperature=0.3,
                         params={"top_p": 0.9, "seed": 1})
    tables = {"anthropic/claude-b": ModelSettings.model_validate(
                  {"max_tokens": 50, "params": {"top_p": 0.5}}),
              "openai/x": ModelSettings.model_validate({"api_base": "http://x",
                                                        "vision": True})}
    assert resolve(base, tables, None) == base
    assert resolve(base, tables, "anthropic/claude-a") == base
    same = resolve(base, tables, "anthropic/claude-b")
    assert (same.api_base, same.api_key, same.temperature, same.max_tokens) == (
        "http://a", "k-a", 0.3, 50)
    assert (same.vision, same.audio, same.context_window) == (None, None, None)
    assert same.params == {"top_p": 0.5, "seed": 1}
    other = resolve(base, tables, "openai/x")
    assert (other.name, other.api_base, other.api_key, other.vision, other.temperature) == (
        "openai/x", "http://x", None, True, 0.3)
    bare = resolve(base, {}, "gemini/g")
    assert (bare.api_base, bare.api_key, bare.vision) == (None, None, None)
    flags = ModelFlags(model="anthropic/claude-b", api_base="http://flag",
                       reasoning_effort="high")
    flagged = resolve(base, tables, "anthropic/claude-b", flags)
    assert (flagged.api_base, flagged.reasoning_effort) == ("http://flag", "high")
    # The flag's endpoint is for the command line's provider, its level for any model.
    moved = resolve(base, tables, "openai/x", flags)
    assert (moved.api_base, moved.reasoning_effort) == ("http://x", "high")
    assert provider("gpt-4o") == "" and provider("ollama_chat/qwen3:8b") == "ollama_chat"
    # A [model] without a name describes whichever model is chosen.
    unnamed = base.model_copy(update={"name": None})
    assert resolve(unnamed, {}, "openai/x") == unnamed.model_copy(update={"name": "openai/x"})


def test_models_tables_are_checked_like_model(tmp_path: Path) -> None:
    """Unknown keys, bad values and keys that choose models get [model]'s clear errors,
    with the file and the line."""
    for body, said in (
            ('[models."openai/x"]\ntemprature = 0.2\n',
             "line 2: models.openai/x: unknown key 'temprature' (did you mean 'temperature'?)"),
            ('[models."openai/x"]\n\nreasoning_effort = "max"\n',
             "line 3: models.openai/x.reasoning_effort: expected 'none', 'minimal', 'low', "
             "'medium' or 'high'"),
            ('[models."openai/x"]\nname = "openai/y"\n',
             "line 1: models.openai/x: 'name' belongs in [model], not in a [models] table")):
        cfg = write(tmp_path / "c.toml", body)
        with pytest.raises(ConfigError) as caught:
            load(cfg, env={})
        assert said in str(caught.value) and str(cfg) in str(caught.value), str(caught.value)


def test_model_flag_takes_the_models_own_settings_end_to_end(
        quiet_stdin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--model X`` with a [model] for another provider (its endpoint, vision = true):
    X's request goes to X's own endpoint with X's table's settings, and no image goes to
    X, which cannot read one."""
    (quiet_stdin / "red.png").write_bytes(png(8, 8))
    with FakeLLM() as other, FakeLLM([Reply(text="hello from x")]) as own:
        cfg = write(quiet_stdin / "c.toml", f"""
[model]
name = "anthropic/claude-elsewhere"
api_base = "{other.base_url}"
api_key = "sk-other-provider"
vision = true
context_window = 2048

[models."openai/fake-model"]
api_base = "{own.base_url}"
api_key = "sk-test-key"
temperature = 0.25
max_tokens = 77
max_retries = 0
params = {{ top_p = 0.5 }}
""")
        base = ["run", "--no-project", "--config", str(cfg), "--model", "openai/fake-model"]
        assert main([*base, "--image", "red.png", "colour?"]) == 2
        assert "does not read images" in capsys.readouterr().err
        assert main([*base, "hi"]) == 0
        assert "hello from x" in capsys.readouterr().out
        assert other.requests == []
        body = own.requests[0]
        assert (body["model"], body["temperature"], body["max_tokens"], body["top_p"]) == (
            "fake-model", 0.25, 77, 0.5)


def test_model_endpoint_carries_within_its_provider(
        quiet_stdin: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    """``--model`` of [model]'s provider keeps [model]'s endpoint and key (with its own
    table's settings over them); ``--api-base`` wins over both."""
    fake_llm.push(Reply(text="one"), Reply(text="two"))
    cfg = write(quiet_stdin / "c.toml", """
[model]
name = "openai/gpt-4o"
api_base = "http://127.0.0.1:9/v1"
api_key = "sk-test-key"
max_retries = 0

[models."openai/fake-model"]
max_tokens = 5
""")
    run = ["run", "--no-project", "--config", str(cfg)]
    assert main([*run, "--model", "openai/fake-model", "--api-base", fake_llm.base_url,
                 "hi"]) == 0
    write(cfg, cfg.read_text(encoding="utf-8").replace("http://127.0.0.1:9/v1",
                                                       fake_llm.base_url))
    assert main([*run, "--model", "openai/fake-model", "again"]) == 0
    assert [(r["model"], r["max_tokens"]) for r in fake_llm.requests] == [
        ("fake-model", 5), ("fake-model", 5)]
    capsys.readouterr()


def test_reasoning_effort_flag(quiet_stdin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--reasoning-effort`` overrides the chosen model's setting, is shown with its
    source, and a level that does not exist is argparse's clear error."""
    cfg = write(quiet_stdin / "c.toml", """
[model]
name = "openai/a"
[models."openai/a"]
reasoning_effort = "low"
""")
    show = ["--no-project", "config", "--show", "--config", str(cfg)]
    assert main(show) == 0
    assert 'reasoning_effort = "low"' in capsys.readouterr().out
    assert main([*show, "--reasoning-effort", "high"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("reasoning_effort"))
    assert '"high"' in line and line.endswith("# --reasoning-effort")
    for argv in (["run", "--reasoning-effort", "max", "hi"], ["--reasoning-effort", "x"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert "argument --reasoning-effort: invalid choice" in err
        assert "'none', 'minimal', 'low', 'medium', 'high'" in err


def test_config_show_lists_models_tables_with_origins(
        quiet_stdin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write(quiet_stdin / "c.toml", """
[model]
name = "anthropic/claude-a"
vision = true

[models."openai/gpt-4o"]
temperature = 0.1
api_key = "sk-secret-value-123"
params = { top_p = 0.5 }
""")
    assert main(["--no-project", "config", "--show", "--config", str(cfg), "--model",
                 "openai/gpt-4o"]) == 0
    out = capsys.readouterr().out
    assert "sk-secret-value-123" not in out
    table = out[out.index('[models."openai/gpt-4o"]'):]
    assert "temperature = 0.1" in table and f"{cfg}:7" in table
    assert "params = { top_p = 0.5 }" in table and f"{cfg}:9" in table
    assert "the files' [model] is for anthropic/claude-a; its vision did not carry" in out
    model = out[out.index("[model]\n"):out.index("[agent]")]
    assert "# vision is not set" in model
    assert next(x for x in model.splitlines() if x.startswith("temperature")).endswith(
        f"{cfg}:7")


def test_project_models_endpoints_wait_for_trust(tmp_path: Path) -> None:
    """A project's [models] api_base and keys are held like its [model]'s; the rest of
    the table applies at once."""
    project = tmp_path / "proj"
    write(project / ".tui-agent" / "config.toml", """
[models."openai/x"]
api_base = "http://127.0.0.1:9/v1"
temperature = 0.4
""")
    settings = load(cwd=project)
    assert settings.held is not None
    assert list(settings.held.keys) == ['models."openai/x".api_base']
    assert settings.config.models["openai/x"].api_base is None
    assert settings.config.models["openai/x"].temperature == 0.4
    trusted = load(cwd=project, trust=True)
    assert trusted.held is None
    assert trusted.config.models["openai/x"].api_base == "http://127.0.0.1:9/v1"


@pytest.mark.anyio
async def test_sampling_model_gets_its_own_settings(tmp_path: Path) -> None:
    """``[model] sampling_model`` answers servers' sampling requests with its own table's
    endpoint and settings, not the chat model's."""
    from tui_agent.tools.sampling import SampleRequest
    from tui_agent.wiring import build

    with FakeLLM() as chat, FakeLLM([Reply(text="sampled")]) as sampler:
        settings = load(write(tmp_path / "c.toml", f"""
[model]
name = "anthropic/claude-chat"
api_base = "{chat.base_url}"
sampling_model = "openai/fake-model"

[models."openai/fake-model"]
api_base = "{sampler.base_url}"
api_key = "sk-test-key"
temperature = 0.3
max_retries = 0
"""), env={}, project=False)
        complete = build.sampling_complete(lambda: settings, lambda: "anthropic/claude-chat",
                                           lambda: settings.secrets)
        said = await complete(SampleRequest(server="s", messages=(("user", "hi"),),
                                            system_prompt=None, max_tokens=20))
        assert said == ("sampled", "openai/fake-model")
        assert chat.requests == []
        assert (sampler.requests[0]["temperature"], sampler.requests[0]["max_tokens"]) == (
            0.3, 20)


def test_a_model_without_a_name_describes_the_flags_model(tmp_path: Path) -> None:
    """A [model] without a name describes the model ``--model`` names: a model chosen
    later (``/model``) does not get its vision, window or endpoint (unless of the same
    provider); with neither name nor flag it applies whole. Two different bare names are
    not one provider."""
    unnamed = ModelSettings(api_base="http://a", api_key="k-a", vision=True,
                            context_window=9000, temperature=0.3)
    flags = ModelFlags(model="openai/a")
    own = resolve(unnamed, {}, None, flags)
    assert (own.name, own.api_base, own.vision, own.context_window) == (
        "openai/a", "http://a", True, 9000)
    same = resolve(unnamed, {}, "openai/b", flags)
    assert (same.api_base, same.api_key, same.vision, same.context_window,
            same.temperature) == ("http://a", "k-a", None, None, 0.3)
    other = resolve(unnamed, {}, "anthropic/c", flags)
    assert (other.api_base, other.api_key, other.vision) == (None, None, None)
    assert resolve(unnamed, {}, "anthropic/c") == unnamed.model_copy(
        update={"name": "anthropic/c"})
    bare = ModelSettings(name="gpt-4o", api_base="http://a", vision=True)
    assert (resolve(bare, {}, "claude-3-haiku").api_base, resolve(bare, {}, "gpt-4o").vision,
            resolve(bare, {}, "openai/gpt-4o").api_base) == (None, True, None)
    # Through the settings the app's /model uses.
    settings = load(write(tmp_path / "c.toml", """
[model]
api_base = "http://127.0.0.1:9/v1"
vision = true
context_window = 4096
"""), env={}, project=False)
    settings.override(model="openai/fake-model")
    assert settings.config.model.api_base == "http://127.0.0.1:9/v1"
    picked = settings.model_for("anthropic/claude-x")
    assert (picked.api_base, picked.vision, picked.context_window) == (None, None, None)


BROKEN = """
[model]
name = "openai/a"

[models."openai/b"]
temperature = 0.2
api_key_env = "NOT_SET_ANYWHERE"
"""
BROKEN_SAID = ('line 7: models."openai/b".api_key_env: the variable NOT_SET_ANYWHERE is '
               "not set")


def test_a_broken_table_stops_only_the_model_it_is_for(
        quiet_stdin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A [models] table whose key variable is unset does not stop a start with another
    model; choosing its model (at start, ``--model``, ``/model``, ``sampling_model``)
    gets the error, with the file and line."""
    cfg = write(quiet_stdin / "c.toml", BROKEN)
    settings = load(cfg, env={}, project=False)
    settings.override()
    assert settings.model_for("openai/c").name == "openai/c"
    sampling = write(quiet_stdin / "s.toml", BROKEN.replace(
        'name = "openai/a"', 'name = "openai/a"\nsampling_model = "openai/b"'))
    for choose, file, line in (
            (lambda: settings.model_for("openai/b"), cfg, 7),
            (lambda: load(cfg, env={}, project=False).override(model="openai/b"), cfg, 7),
            (lambda: load(sampling, env={}, project=False).override(), sampling, 8)):
        with pytest.raises(ConfigError) as caught:
            choose()
        said = str(caught.value)
        assert BROKEN_SAID.replace("line 7", f"line {line}") in said and str(file) in said
    show = ["--no-project", "config", "--show", "--config", str(cfg)]
    assert main(show) == 0
    out = capsys.readouterr().out
    assert "# not usable until fixed (it is a problem only when openai/b is chosen)" in out
    assert main([*show, "--model", "openai/b"]) == 2
    err = capsys.readouterr().err
    assert BROKEN_SAID in err and str(cfg) in err and "Traceback" not in err
    assert main(["run", "--no-project", "--config", str(cfg), "--model", "openai/b",
                 "hi"]) == 2
    assert BROKEN_SAID in capsys.readouterr().err
