"""One server's unset ``${VAR}`` (issue 46): a ``headers = {Authorization = "Bearer
${GH_TOKEN}"}`` with GH_TOKEN unset no longer stops the whole program. That server is
not started and shows as failed, saying which file, server and variable and what to do;
the other servers and the chat work; ``config --show`` shows it as written, marked
unresolved. ``main()`` on real config files, a real MCP server and the scripted LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import write_config
from tui_agent.cli import main

GH = '\n[servers.gh]\nurl = "http://127.0.0.1:9/mcp"\n' \
     'headers = { Authorization = "Bearer ${GH_TOKEN}" }\n'


@pytest.fixture
def config(tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GH_TOKEN", raising=False)
    return write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                        servers={"good": []}, extra=GH)


def why(config: Path) -> str:
    line = len(config.read_text(encoding="utf-8").splitlines())  # the headers line: last
    return (f"not started: {config}: line {line}: servers.gh.headers.Authorization: "
            "${GH_TOKEN} is not set in the environment (set GH_TOKEN, or remove it from "
            "server 'gh', or write ${GH_TOKEN:-default} to give a default)")


def test_run_chats_with_the_other_servers(config: Path, fake_llm: FakeLLM,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="hello there"))
    assert main(["--config", str(config), "run", "hi"]) == 0
    said = capsys.readouterr()
    assert "hello there" in said.out
    assert f"note: MCP server 'gh' is not available: {why(config)}" in said.err, said.err
    offered = {t["function"]["name"] for t in fake_llm.requests[0].get("tools", [])}
    assert any(name.startswith("good__") for name in offered), offered
    assert not any(name.startswith("gh__") for name in offered)


def test_servers_shows_it_failed_and_the_rest_connected(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["servers", "--config", str(config)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("good  connected  stdio") for line in lines), lines
    assert "gh  failed  http  0 tools" in lines, lines
    assert f"  error: {why(config)}" in lines, lines


def test_config_show_marks_it_unresolved(config: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--show", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"# unresolved, the server is {why(config)}" in out, out
    assert 'url = "http://127.0.0.1:9/mcp"' in out
