"""``[model] params`` and ``[models."NAME"] params``: a project's wait for the user's
trust like its endpoint, the arguments tui-agent sets itself are refused, they carry
only to a model of the same provider, ``${VAR}`` is expanded in them, and ``config
--show`` (and the consent screen's lines) never print their secrets."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tui_agent.cli import main
from tui_agent.config import ConfigError, ModelSettings, load
from tui_agent.config.model_choice import ModelFlags, resolve
from tui_agent.config.show import held_lines


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def quiet_stdin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    monkeypatch.chdir(tmp_path)
    return tmp_path


PROJECT = """
[model]
name = "openai/fake-model"
params = { user = "proj", extra_headers = { Authorization = "Bearer sk-planted-123456" } }

[models."openai/other"]
temperature = 0.4
params = { top_p = 0.1 }
"""


def test_a_projects_params_wait_for_trust(tmp_path: Path) -> None:
    """An untrusted project's params (of [model] and of a [models] table) are held and
    listed for the user's answer, secrets hidden; the rest of the table applies."""
    project = tmp_path / "proj"
    config = write(project / ".tui-agent" / "config.toml", PROJECT)
    settings = load(cwd=project, env={})
    assert settings.held is not None
    assert set(settings.held.keys) == {"model.name", "model.params",
                                       'models."openai/other".params'}
    assert settings.config.model.params == {}
    assert settings.config.models["openai/other"].params == {}
    assert settings.config.models["openai/other"].temperature == 0.4
    lines = held_lines(settings.held)
    said = next(line for line in lines if line.startswith("model.params"))
    assert 'user = "proj"' in said and "sk-planted" not in said
    assert 'Authorization = "********"' in said and "config.toml:4" in said
    assert "arguments sent with your model requests" in said
    assert any(line.startswith('models."openai/other".params = { top_p = 0.1 }')
               for line in lines)
    trusted = load(cwd=project, env={}, trust=True)
    assert trusted.held is None
    assert trusted.config.model.params["user"] == "proj"
    assert trusted.config.models["openai/other"].params == {"top_p": 0.1}
    # Changing the params asks again.
    write(config, PROJECT.replace("top_p = 0.1", "top_p = 0.2"))
    assert load(cwd=project, env={}).held is not None


def test_an_untrusted_projects_params_are_not_sent(
        quiet_stdin: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="hi"))
    write(quiet_stdin / ".tui-agent" / "config.toml",
          '[model]\nparams = { seed = 77 }\n')
    assert main(["run", "--model", "openai/fake-model", "--api-base", fake_llm.base_url,
                 "hi"]) == 0
    assert "model.params = { seed = 77 }" in capsys.readouterr().err
    assert "seed" not in fake_llm.requests[0]


@pytest.mark.parametrize("key, instead", [
    ("api_base", "use [model] api_base"), ("base_url", "use [model] api_base"),
    ("api_key", "use [model] api_key_env"), ("model", "the model is [model] name"),
    ("messages", "tui-agent sends the conversation"), ("stream", "always streams"),
    ("stream_options", "to read the usage"), ("tools", "from the MCP servers")])
def test_params_refuse_what_tui_agent_sets(tmp_path: Path, key: str, instead: str) -> None:
    for section, dotted in (("[model]", "model.params"),
                            ('[models."openai/x"]', "models.openai/x.params")):
        cfg = write(tmp_path / "c.toml", f'{section}\n\nparams = {{ {key} = "x" }}\n')
        with pytest.raises(ConfigError) as caught:
            load(cfg, env={}, project=False)
        said = str(caught.value)
        assert str(cfg) in said and f"line 3: {dotted}: '{key}' cannot be set in params" in said
        assert instead in said, said


def test_params_carry_only_within_a_provider() -> None:
    base = ModelSettings(name="anthropic/claude-a", params={"top_k": 5, "seed": 1})
    tables = {"openai/x": ModelSettings.model_validate({"params": {"top_p": 0.5}})}
    assert resolve(base, tables, "anthropic/claude-b").params == {"top_k": 5, "seed": 1}
    assert resolve(base, tables, "openai/x").params == {"top_p": 0.5}
    assert resolve(base, tables, "gemini/g").params == {}
    unnamed = base.model_copy(update={"name": None})
    flags = ModelFlags(model="anthropic/claude-a")
    assert resolve(unnamed, {}, "openai/y", flags).params == {}
    assert resolve(unnamed, {}, None, flags).params == {"top_k": 5, "seed": 1}


def test_params_of_another_provider_are_not_sent(
        quiet_stdin: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    """``--model`` of another provider than [model]'s: [model]'s params (Anthropic's
    top_k, which OpenAI refuses) stay behind; the model's own table's are sent."""
    fake_llm.push(Reply(text="ok"))
    cfg = write(quiet_stdin / "c.toml", f"""
[model]
name = "anthropic/claude-elsewhere"
params = {{ top_k = 5 }}

[models."openai/fake-model"]
api_base = "{fake_llm.base_url}"
api_key = "sk-test-key"
max_retries = 0
params = {{ top_p = 0.5 }}
""")
    assert main(["run", "--no-project", "--config", str(cfg), "--model",
                 "openai/fake-model", "hi"]) == 0
    capsys.readouterr()
    body = fake_llm.requests[0]
    assert "top_k" not in body and body["top_p"] == 0.5


def test_params_expand_variables_and_config_show_hides_secrets(
        quiet_stdin: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PARAM_TOKEN", "tok-from-the-env-987")
    monkeypatch.setenv("PARAM_USER", "ab")
    fake_llm.push(Reply(text="ok"))
    cfg = write(quiet_stdin / "c.toml", f"""
[model]
name = "openai/fake-model"
api_base = "{fake_llm.base_url}"
api_key = "sk-test-key"
max_retries = 0

[model.params]
user = "${{PARAM_USER}}"
seed = 3
extra_body = {{ trace = "${{PARAM_TOKEN}}" }}

[model.params.extra_headers]
Authorization = "Bearer ${{PARAM_TOKEN}}"
x-api-key = "sk-written-as-is-42"
X-Plain = "visible-value"
""")
    settings = load(cfg, project=False)
    params = settings.config.model.params
    assert params["user"] == "ab"
    assert params["extra_headers"]["Authorization"] == "Bearer tok-from-the-env-987"
    assert {"tok-from-the-env-987", "sk-written-as-is-42"} <= settings.secrets
    assert main(["--no-project", "config", "--show", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    for secret in ("tok-from-the-env-987", "sk-written-as-is-42", '"ab"'):
        assert secret not in out
    line = next(x for x in out.splitlines() if x.startswith("params = "))
    assert 'Authorization = "********"' in line and 'x-api-key = "********"' in line
    assert 'user = "********"' in line and "seed = 3" in line
    assert 'X-Plain = "visible-value"' in line and line.endswith(f"{cfg}:8")
    assert main(["run", "--no-project", "--config", str(cfg), "hi"]) == 0
    capsys.readouterr()
    assert fake_llm.requests[0]["trace"] == "tok-from-the-env-987"


def test_an_unset_variable_in_params_names_where(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", '[model]\nname = "openai/a"\n\n[model.params]\n'
                'extra_headers = { X-Token = "${NOT_SET_ANYWHERE}" }\n')
    with pytest.raises(ConfigError) as caught:
        load(cfg, env={}, project=False)
    said = str(caught.value)
    assert str(cfg) in said and "line 5: model.params.extra_headers.X-Token: " \
        "${NOT_SET_ANYWHERE} is not set in the environment" in said, said
