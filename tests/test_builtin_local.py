"""The built-in server as users meet it: configured by default as ``local`` (a
``[servers.local]`` without a command adjusts it, ``disabled = true`` turns it off, one with
a command replaces it; ``--no-builtin`` and ``TUI_AGENT_NO_BUILTIN`` leave it out), and
"summarise README.md" on a fresh install through ``tui-agent run`` and the scripted model:
the read runs without asking, an edit asks (here: denied, the file untouched)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_kit import entry_point, local_config, ok, run
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_project
from tui_agent.config import ConfigError, load
from tui_agent.config.builtin_server import is_builtin

_ = entry_point


@pytest.fixture
def builtin_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TUI_AGENT_NO_BUILTIN")


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.usefixtures("builtin_on")
def test_local_is_there_by_default_and_can_be_adjusted_or_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = load(config_file(tmp_path, "")).config.servers["local"]
    assert is_builtin(local) and local.auto == ["read", "list", "glob", "grep", "shell_output"]
    assert local.timeout == 630  # the longest command ([tools.shell] max_timeout) and more
    adjusted = load(config_file(tmp_path, '[servers.local]\nauto = ["read"]\ntimeout = 5\n'))
    local = adjusted.config.servers["local"]
    assert is_builtin(local) and (local.auto, local.timeout) == (["read"], 5)
    off = load(config_file(tmp_path, "[servers.local]\ndisabled = true\n"))
    assert off.config.servers["local"].disabled
    own = load(config_file(tmp_path, '[servers.local]\ncommand = "my-server"\n'))
    assert own.config.servers["local"].command == "my-server"
    assert "local" not in load(config_file(tmp_path, ""), builtin=False).config.servers
    assert "local" in load(config_file(tmp_path, '[servers.local]\ncommand = "mine"\n'),
                           builtin=False).config.servers  # --no-builtin leaves theirs
    monkeypatch.setenv("TUI_AGENT_NO_BUILTIN", "1")
    assert "local" not in load(config_file(tmp_path, "")).config.servers


@pytest.mark.usefixtures("builtin_on")
def test_a_bad_adjustment_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(config_file(tmp_path, "[servers.local]\n\nauto = 5\n"))
    assert "servers.local.auto" in str(caught.value) and "line 3" in str(caught.value)


def test_no_builtin_and_add_dir_on_the_command_line(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.cli import main

    monkeypatch.delenv("TUI_AGENT_NO_BUILTIN")
    config = config_file(tmp_path, "")
    assert main(["config", "--config", str(config), "--show"]) == 0
    assert "[servers.local]" in capsys.readouterr().out
    assert main(["--no-builtin", "config", "--config", str(config), "--show"]) == 0
    assert "[servers.local]" not in capsys.readouterr().out
    assert main(["run", "--add-dir", str(tmp_path / "nope"), "--config", str(config),
                 "hi"]) == 2
    assert f"--add-dir {tmp_path / 'nope'}: not a folder" in capsys.readouterr().err


@pytest.mark.slow
def test_summarise_the_readme_on_a_fresh_install(tmp_path: Path, fake_llm: FakeLLM,
                                                 capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    readme = "# Demo\nA tool that says hello.\n"
    project = local_project(tmp_path, monkeypatch, {"README.md": readme})
    config = local_config(tmp_path, fake_llm.base_url)  # tagged: the server ends with the run
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__read", {"path": "README.md"},
                                                 id="r")]),
                  Reply(tool_calls=[FakeToolCall("local__edit", {
                      "path": "README.md", "old_string": "hello", "new_string": "bye"},
                      id="e")]),
                  Reply(text="It is a demo tool that says hello."))
    result = ok(run(capsys, config, "summarise README.md", "--approve", "deny"))
    decisions = {e["id"]: e["decision"] for e in result.of("approval")}
    assert decisions == {"r": "auto", "e": "denied"}, result.of("approval")
    results = {e["id"]: e["text"] for e in result.of("tool_result")}
    assert results["r"] == "     1\t# Demo\n     2\tA tool that says hello."
    assert (project / "README.md").read_text() == readme
    assert result.text() == "It is a demo tool that says hello."
