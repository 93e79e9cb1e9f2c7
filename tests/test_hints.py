"""A server's hints about its tools (MCP tool annotations) reach the approval gate as
badges: read-only, destructive (only for a tool that is not read-only), idempotent,
open-world. They are an untrusted server's word: a read-only hint approves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.types import ToolAnnotations

from tests.conftest import model_for
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_agent import RecordingGate
from tests.test_client_side import asking_server, hub_of
from tests.zygote import TUI_AGENT
from tui_agent.core.agent import Agent
from tui_agent.core.llm import LLM
from tui_agent.tools.client import ClientSide
from tui_agent.tools.spec import hints_of


def test_the_hints_of_annotations() -> None:
    assert hints_of(None) == ()
    assert hints_of(ToolAnnotations(read_only_hint=True, destructive_hint=True,
                                    idempotent_hint=True, open_world_hint=True)) == \
        ("read-only", "open-world")  # destructive and idempotent mean nothing when read-only
    assert hints_of(ToolAnnotations(destructive_hint=True, idempotent_hint=True)) == \
        ("destructive", "idempotent")
    assert hints_of(ToolAnnotations(open_world_hint=False)) == ()
    assert hints_of(ToolAnnotations(destructive_hint=False)) == ("non-destructive",)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_read_only_hint_still_asks_and_the_gate_sees_the_hints(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("a__roots", {}, id="r"),
                                    FakeToolCall("a__subscribe", {}, id="s")]),
                  Reply(text="ok"))
    async with hub_of({"a": asking_server()}, tmp_path,
                      client_side=lambda n, c: ClientSide()) as hub:
        by_tool = {s.tool: s for s in hub.specs()}
        assert by_tool["roots"].hints == ("read-only",)
        assert by_tool["subscribe"].hints == ("destructive", "open-world")
        gate = RecordingGate()
        agent = Agent(LLM(model_for(fake_llm)), hub, gate)
        async for _ in agent.run_turn("go"):
            pass
    assert [(c.tool, c.hints) for c in gate.asked] == [
        ("roots", ("read-only",)), ("subscribe", ("destructive", "open-world"))]


@pytest.mark.slow
def test_a_tool_that_runs_only_as_a_task_is_offered_when_the_server_takes_tasks(
        tmp_path: Path) -> None:
    """server-everything's simulate-research-query requires task execution, and the
    server declares task-augmented ``tools/call``: it is offered beside the others, and
    nothing is held back (tests/test_tasks.py runs it, and holds back task-only tools of
    a server that takes no tasks)."""
    import json
    import os
    import subprocess

    from tests.conftest import ROOT, tagged_env
    from tests.reference import everything

    conf = tmp_path / "c.toml"
    conf.write_text(f'[servers.every]\ncommand = {json.dumps(everything())}\n'
                    'args = ["stdio"]\nstartup_timeout = 30\n', encoding="utf-8")
    done = subprocess.run([*TUI_AGENT, "servers", "--config", str(conf)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, **tagged_env(), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not offered" not in done.stdout
    assert "every__simulate-research-query" in done.stdout
    assert "every__echo" in done.stdout
