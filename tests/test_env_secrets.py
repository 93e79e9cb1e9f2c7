"""A key that lives only in the environment (``OPENAI_API_KEY`` exported, nothing in the
config) is masked like a configured one: in the reply on stdout, in an error that echoes
it, and in the session file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_elicitation import run
from tui_agent.config.loader import environment_keys

KEY = "sk-only-in-the-environment-0123456789"


def test_which_variables_count_as_keys() -> None:
    env = {"OPENAI_API_KEY": KEY, "GITHUB_TOKEN": "ghp_x", "HF_ACCESS_TOKEN": "hf_abcdefgh",
           "SHORT_API_KEY": "abc", "HOME": "/home/ada-lovelace"}
    assert environment_keys(env) == {KEY, "hf_abcdefgh"}


@pytest.mark.slow
def test_an_environment_key_never_reaches_output_or_files(
        tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    conf = tmp_path / "c.toml"
    conf.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake_llm.base_url}"\n'
                    "max_retries = 0\n", encoding="utf-8")
    fake_llm.push(Reply(text=f"your key is {KEY}, isn't it?"))
    done = run(conf, "what is my key?")
    assert done.returncode == 0, done.stderr
    assert fake_llm.authorizations == [f"Bearer {KEY}"]  # sent to the provider, as it must be
    said = "".join(e.get("delta", "") for e in map(json.loads, done.stdout.splitlines()))
    assert KEY not in done.stdout and "your key is ***" in said
    session = Path(json.loads(done.stdout.splitlines()[0])["path"])
    assert KEY not in session.read_text(encoding="utf-8")
    fake_llm.push(Reply(status=401, error_message=f"Incorrect API key provided: {KEY}"))
    failed = run(conf, "again")
    assert failed.returncode != 0
    assert KEY not in failed.stdout + failed.stderr and "***" in failed.stdout + failed.stderr


def test_keys_written_in_the_config_as_they_are_are_secrets_too(tmp_path: Path) -> None:
    from tui_agent.config import load

    config = tmp_path / "c.toml"
    config.write_text('[model]\nname = "openai/x"\napi_key = "sk-literal-model-key"\n\n'
                      '[servers.gh]\nurl = "http://127.0.0.1:9/mcp"\n'
                      'headers = { Authorization = "Bearer literal-header-token", '
                      '"User-Agent" = "tui-agent-tests" }\n\n'
                      '[servers.local]\ncommand = "server"\n'
                      'env = { GITHUB_TOKEN = "ghp_literalservertoken", '
                      'LOG_LEVEL = "verbose-debugging" }\n', encoding="utf-8")
    secrets = load(config, project=False).secrets
    assert {"sk-literal-model-key", "Bearer literal-header-token",
            "ghp_literalservertoken"} <= secrets
    assert "tui-agent-tests" not in secrets and "verbose-debugging" not in secrets
