"""Per-run tool filters: ``--servers``, ``--exclude-servers``, ``--tools``,
``--exclude-tools``. They narrow what the config allows, never widen it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ROOT, TAG_VAR
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.zygote import module
from tui_agent.cli import main
from tui_agent.core.filters import ToolFilter, split
from tui_agent.core.permissions import Policy, ServerRules


def test_patterns_match_server_tool_names_or_bare_tool_names() -> None:
    f = ToolFilter(servers=("git", "fs*"), tools=("git__*", "read_*"),
                   exclude_tools=("git__push",))
    assert f.allows("git", "status") and not f.allows("git", "push")
    assert f.allows("fs_home", "read_file") and not f.allows("fs_home", "write_file")
    assert not f.allows("time", "read_clock"), "time is not among --servers"
    assert ToolFilter(exclude_servers=("time",)).server_on("git")
    assert not ToolFilter(exclude_servers=("t*",)).server_on("time")
    off = ToolFilter().switched("git__status", False).switched("fs", False)
    assert not off.allows("git", "status") and off.allows("git", "log")
    assert not off.allows("fs", "read_file")
    assert off.switched("fs", True).allows("fs", "read_file")
    assert split(["a,b", " c ,", "d"]) == ("a", "b", "c", "d") and split(None) is None
    assert ToolFilter(servers=("gti",)).unknown_servers(["git", "time"]) == ["gti"]
    assert ToolFilter(tools=("git__sttus", "git__*")).unmatched_tools(
        [("git", "status")]) == ["git__sttus"]


def test_a_filter_never_widens_the_config() -> None:
    policy = Policy({"git": ServerRules(allow=("status", "log"))},
                    filter=ToolFilter(tools=("git__*",)))
    assert policy.offered("git", "status")
    assert not policy.offered("git", "push"), "the config does not allow it"
    verdict = policy.judge("git", "push")
    assert verdict.verdict == "deny" and "allow list" in verdict.why
    policy.filter = ToolFilter(exclude_tools=("log",))
    verdict = policy.judge("git", "log")
    assert verdict.verdict == "deny" and "left out of this run" in verdict.why
    assert policy.standing("git", "log") == "ask", "the config's standing is unchanged"


def two_servers(tmp_path: Path) -> Path:
    """``a`` and ``b``: our MCP server; ``ghost`` cannot start (a note would say so)."""
    lines = []
    command, *argv = module("tests.fakes.mcp_server")
    for name in ("a", "b"):
        lines += [f"[servers.{name}]", f"command = {json.dumps(command)}",
                  f"args = {json.dumps(argv)}", f"cwd = {json.dumps(str(ROOT))}",
                  f"env = {{ {TAG_VAR} = {json.dumps(os.environ[TAG_VAR])} }}",
                  "startup_timeout = 20", ""]
    lines += ["[servers.ghost]", 'command = "no-such-server-cmd"']
    path = tmp_path / "c.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(fake: FakeLLM, config: Path, *args: str) -> list[str]:
    return ["--config", str(config), "run", "--model", "openai/fake-model", "--api-base",
            fake.base_url, "--output", "jsonl", "--approve", "auto", *args]


def offered(fake: FakeLLM, request: int = 0) -> list[str]:
    return sorted(t["function"]["name"] for t in fake.requests[request].get("tools", []))


def test_run_offers_only_what_the_filters_let_through(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only server ``a`` starts (``ghost`` would have been reported); of its tools, the
    ones ``--tools`` names, minus ``--exclude-tools``; a call to a filtered-out tool gets
    the error an unknown tool gets, with the tools there are."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("a__add", {"a": 1, "b": 2})]),
                  Reply(text="done"))
    code = main(run(fake_llm, two_servers(tmp_path), "--servers", "a",
                    "--tools", "a__e*,a__add,a__pid", "--exclude-tools", "add", "go"))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert offered(fake_llm) == ["a__echo", "a__escapes", "a__pid"]
    assert "ghost" not in out.out + out.err, "an excluded server is not started"
    events = [json.loads(line) for line in out.out.splitlines()]
    results = [e for e in events if e["type"] == "tool_result"]
    assert len(results) == 1 and results[0]["is_error"]
    assert "no tool named 'a__add'" in results[0]["text"]
    assert "Available tools: a__echo, a__escapes, a__pid" in results[0]["text"]


def test_exclude_servers_and_a_typo_in_a_tool_pattern(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="ok"))
    code = main(run(fake_llm, two_servers(tmp_path), "--exclude-servers", "b,ghost",
                    "--tools", "a__echo,a__ecoh", "hi"))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert offered(fake_llm) == ["a__echo"]
    notices = [json.loads(line) for line in out.out.splitlines()
               if json.loads(line)["type"] == "notice"]
    assert any("'a__ecoh'" in n["message"] and "match no tool" in n["message"]
               for n in notices), notices


def test_an_unknown_server_in_a_filter_is_a_usage_error(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run(fake_llm, two_servers(tmp_path), "--servers", "a,gohst", "hi")) == 2
    err = capsys.readouterr().err
    assert "'gohst' names no configured server (configured: a, b, ghost)" in err
    assert fake_llm.requests == []
