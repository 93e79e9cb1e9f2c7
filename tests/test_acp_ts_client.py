"""``tui-agent acp`` driven by the official ACP TypeScript SDK's client side (npm
``@agentclientprotocol/sdk`` 2.4.0, its stable v1 entrypoint, installed with npm from
``tests/acp_ts/package-lock.json``): ``tests/acp_ts/client.mjs`` spawns the agent over
stdio, runs a scripted sequence of requests and prints every response, error and
``session/update`` as JSON lines, which these tests read. Every stable v1 method the agent
offers goes through it at least once: ``initialize``, ``authenticate``, ``session/new``,
``session/prompt``, ``session/list``, ``session/resume``, ``session/load``,
``session/close``, ``session/delete``, ``session/set_config_option``, ``session/set_mode``
and ``$/cancel_request`` (the SDK's cancellation signal)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acp_kit import config
from tests.conftest import ROOT, need
from tests.fakes.llm_server import FakeLLM, Reply
from tests.hook_kit import hooks_toml, script
from tests.installs import npm_ci
from tests.zygote import command
from tui_agent.config import paths

pytestmark = pytest.mark.slow

CLIENT_DIR = ROOT / "tests" / "acp_ts"


class Run:
    """What the TypeScript client printed, by kind."""

    def __init__(self, lines: list[dict[str, Any]]) -> None:
        self.lines = lines

    def answer(self, step: int) -> dict[str, Any]:
        """The response (or error) of step ``step``."""
        found = [x for x in self.lines if x.get("step") == step]
        assert found, f"step {step} got no answer; printed: {self.lines}"
        return found[0]

    def result(self, step: int) -> Any:
        answer = self.answer(step)
        assert answer["event"] == "response", answer
        return answer["result"]

    def between(self, first: int, last: int) -> list[dict[str, Any]]:
        """The updates printed after step ``first``'s answer and before step ``last``'s."""
        index = {x.get("step"): i for i, x in enumerate(self.lines) if "step" in x}
        return [x["update"] for x in self.lines[index[first] + 1:index[last]]
                if x["event"] == "update"]


def drive(tmp_path: Path, conf: Path, steps: list[dict[str, Any]], *,
          drop_env: tuple[str, ...] = (), timeout: float = 400) -> Run:
    """The client run over ``steps`` against ``tui-agent acp --config conf``."""
    need(shutil.which("node") is not None, "node")
    npm_ci(CLIENT_DIR, CLIENT_DIR / "node_modules" / "@agentclientprotocol" / "sdk" /
           "package.json", timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"command": [*command(), "acp", "--config", str(conf)],
                                "cwd": str(tmp_path), "env": env, "steps": steps}))
    done = subprocess.run(["node", str(CLIENT_DIR / "client.mjs"), str(plan)],
                          cwd=CLIENT_DIR, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert lines and lines[-1] == {"event": "exit", "code": 0}, (lines[-3:], done.stderr)
    return Run(lines)


def text(content: dict[str, Any]) -> str:
    return str(content.get("text", ""))


def test_every_stable_method_through_the_typescript_sdk(fake_llm: FakeLLM,
                                                       tmp_path: Path) -> None:
    fake_llm.push(Reply(text="Hello from the model.", reasoning="thinking it over"),
                  Reply(text="never finished", hang=True))
    conf = config(tmp_path, fake_llm, extra="context_window = 100000\n")
    cwd, other = str(tmp_path), str(tmp_path / "elsewhere")
    prompt = {"sessionId": "$session", "prompt": [{"type": "text", "text": "hello there"}]}
    run = drive(tmp_path, conf, [
        {"op": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {
            "auth": {"terminal": True}}}},                                              # 0
        {"op": "authenticate", "params": {"methodId": "env-key"}},                      # 1
        {"op": "session/new", "params": {"cwd": cwd, "mcpServers": []}},                # 2
        {"op": "session/prompt", "params": prompt},                                     # 3
        {"op": "session/set_config_option", "params": {
            "sessionId": "$session", "configId": "reasoning_effort", "value": "high"}},  # 4
        {"op": "session/set_config_option", "params": {
            "sessionId": "$session", "configId": "mode", "value": "plan"}},             # 5
        {"op": "session/prompt", "params": {
            "sessionId": "$session", "prompt": [{"type": "text", "text": "/code on"}]}},  # 6
        {"op": "session/list", "params": {}},                                           # 7
        {"op": "session/list", "params": {"cwd": other}},                               # 8
        {"op": "session/close", "params": {"sessionId": "$session"}},                   # 9
        {"op": "session/resume", "params": {"sessionId": "$first", "cwd": cwd,
                                            "mcpServers": []}},                         # 10
        {"op": "wait", "ms": 1500},                                                      # 11
        {"op": "session/load", "params": {"sessionId": "$first", "cwd": cwd,
                                          "mcpServers": []}},                           # 12
        {"op": "cancel", "method": "session/prompt", "params": {"sessionId": "$first",
         "prompt": [{"type": "text", "text": "take your time"}]}, "afterMs": 3000},             # 13
        {"op": "session/set_mode", "params": {"sessionId": "$first", "modeId": "auto"}},  # 14
        {"op": "session/new", "params": {"cwd": cwd, "mcpServers": []}},                # 15
        {"op": "session/delete", "params": {"sessionId": "$first"}},                    # 16
        {"op": "session/list", "params": {"cwd": cwd}},                                 # 17
        {"op": "session/delete", "params": {"sessionId": "20990101-000000-abcdef"}},    # 18
        {"op": "session/load", "params": {"sessionId": "$first", "cwd": cwd,
                                          "mcpServers": []}},                           # 19
    ])
    init = run.result(0)
    caps = init["agentCapabilities"]["sessionCapabilities"]
    assert {"list", "resume", "close", "delete"} <= set(caps)
    methods = {m["id"]: m for m in init["authMethods"]}
    assert methods["env-key"].get("type", "agent") == "agent"
    assert methods["terminal-login"]["type"] == "terminal"
    assert methods["terminal-login"]["args"] == ["--terminal-login"]
    assert run.result(1) == {}

    first = run.result(2)["sessionId"]
    ids = [o["id"] for o in run.result(2)["configOptions"]]
    assert ids == ["model", "mode", "reasoning_effort", "code_mode"]
    assert run.result(3) == {"stopReason": "end_turn"}
    # the model's words and thinking, each one message (a message id shared by its chunks)
    turn = run.between(2, 3)
    reply = [u for u in turn if u["sessionUpdate"] == "agent_message_chunk"
             and "_meta" not in u]
    assert "".join(text(u["content"]) for u in reply) == "Hello from the model."
    assert len({u["messageId"] for u in reply}) == 1
    thought = [u for u in turn if u["sessionUpdate"] == "agent_thought_chunk"]
    assert "".join(text(u["content"]) for u in thought) == "thinking it over"
    assert len({u["messageId"] for u in thought}) == 1
    assert thought[0]["messageId"] != reply[0]["messageId"]
    # the context used of the window, after the request
    usage = [u for u in turn if u["sessionUpdate"] == "usage_update"]
    assert usage and usage[-1]["size"] == 100000 and usage[-1]["used"] > 0
    # the first prompt titles the session, as tui-agent sessions shows it
    info = [u for u in turn if u["sessionUpdate"] == "session_info_update"]
    assert info and info[0]["title"] == "hello there"
    assert info[0]["updatedAt"].endswith("Z")

    options = {o["id"]: o["currentValue"] for o in run.result(4)["configOptions"]}
    assert options["reasoning_effort"] == "high"
    options = {o["id"]: o["currentValue"] for o in run.result(5)["configOptions"]}
    assert options["mode"] == "plan"
    assert {"sessionUpdate": "current_mode_update", "currentModeId": "plan"} in \
        run.between(4, 5) + run.between(5, 6)
    # /code on: its answer is tui-agent's own message, and the option follows
    assert run.result(6) == {"stopReason": "end_turn"}
    after_code = run.between(5, 6) + run.between(6, 7)
    told = [u for u in after_code if u["sessionUpdate"] == "config_option_update"]
    assert told and {o["id"]: o["currentValue"] for o in told[-1]["configOptions"]}[
        "code_mode"] == "code"
    own = [u for u in after_code if u["sessionUpdate"] == "agent_message_chunk"]
    assert own and own[0]["_meta"] == {"tuiAgent": {"kind": "command"}}

    listed = run.result(7)["sessions"]
    mine = [s for s in listed if s["sessionId"] == first]
    assert mine and mine[0]["cwd"] == cwd and mine[0]["title"] == "hello there"
    assert "updatedAt" in mine[0] and "nextCursor" not in run.result(7)
    assert run.result(8) == {"sessions": []}
    assert run.result(9) == {}

    resumed = run.result(10)
    assert {o["id"]: o["currentValue"] for o in resumed["configOptions"]}["model"]
    assert not [u for u in run.between(10, 11) if u["sessionUpdate"].startswith("user_")]
    loaded_said = [u for u in run.between(11, 12)
                   if u["sessionUpdate"] == "user_message_chunk"]
    assert [text(u["content"]) for u in loaded_said][:1] == ["hello there"]
    assert all(u.get("messageId") for u in loaded_said)

    assert run.result(13) == {"stopReason": "cancelled"}  # $/cancel_request on the prompt
    assert run.result(14) == {}
    second = run.result(15)["sessionId"]
    assert run.result(16) == {}
    remaining = [s["sessionId"] for s in run.result(17)["sessions"]]
    assert first not in remaining
    assert run.result(18) == {}  # an id never seen: deleted silently
    gone = run.answer(19)
    assert gone["event"] == "error" and gone["code"] == -32602 and first in str(gone["data"])
    assert second != first


def test_a_model_without_its_key_asks_for_authentication(tmp_path: Path) -> None:
    conf = tmp_path / "config.toml"
    conf.write_text('[model]\nname = "anthropic/claude-sonnet-4-5"\n', encoding="utf-8")
    run = drive(tmp_path, conf, [
        {"op": "initialize", "params": {"protocolVersion": 1}},
        {"op": "authenticate", "params": {"methodId": "env-key"}},
        {"op": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
        {"op": "authenticate", "params": {"methodId": "terminal-login"}},
    ], drop_env=("ANTHROPIC_API_KEY",))
    methods = run.result(0)["authMethods"]
    # no terminal method for an editor that did not say it can run one
    assert [m["id"] for m in methods] == ["env-key"]
    assert "ANTHROPIC_API_KEY" in methods[0]["name"]
    for step in (1, 2):
        refused = run.answer(step)
        assert refused["event"] == "error" and refused["code"] == -32000, refused
        assert "ANTHROPIC_API_KEY" in refused["data"]["message"]
    wrong = run.answer(3)
    assert wrong["code"] == -32602 and "run by the editor" in wrong["data"]["message"]


def test_cancel_request_stops_a_session_being_opened(fake_llm: FakeLLM,
                                                     tmp_path: Path) -> None:
    """``$/cancel_request`` naming a ``session/new`` that waits on its SessionStart hook:
    the request answers -32800 and leaves no session behind: its file is gone and the id
    (the hook was told it) names no session to close or load."""
    told = tmp_path / "hook-input.json"
    slow = script(tmp_path, "slow.sh", f"#!/bin/bash\ncat > '{told}'\nsleep 60\n")
    conf = config(tmp_path, fake_llm,
                  extra="\n" + hooks_toml("SessionStart", str(slow), timeout=120))
    sid = f"$read:{told}#session_id"
    run = drive(tmp_path, conf, [
        {"op": "initialize", "params": {"protocolVersion": 1}},
        {"op": "cancel", "method": "session/new", "params": {
            "cwd": str(tmp_path), "mcpServers": []}, "afterMs": 3000},
        {"op": "ls", "dir": str(paths.sessions_dir())},
        {"op": "session/close", "params": {"sessionId": sid}},
        {"op": "session/load", "params": {"sessionId": sid, "cwd": str(tmp_path),
                                          "mcpServers": []}},
    ])
    cancelled = run.answer(1)
    assert cancelled["event"] == "error" and cancelled["code"] == -32800, cancelled
    hooked = json.loads(told.read_text())
    assert hooked["session_id"] and hooked["transcript_path"].endswith(".jsonl")
    assert run.result(2) == []  # its file (made as it opened) is gone
    for step in (3, 4):
        refused = run.answer(step)
        assert refused["event"] == "error" and refused["code"] == -32602, refused
        assert hooked["session_id"] in json.dumps(refused["data"]), refused
