"""Code mode end to end: a scripted model calls the meta-tools, the script runs in the
sandbox's child process, and every call it makes comes back through the policy, the
gate and the hub to real MCP servers over stdio."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_server, model_for, tagged_env, tagged_processes
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import START, python_server
from tests.test_agent import RecordingGate
from tui_agent.config.models import CodeModeSettings, ServerConfig
from tui_agent.core.agent import Agent
from tui_agent.core.events import (
    ApprovalDecided,
    Event,
    ToolCallStarted,
    ToolResult,
    TurnDone,
)
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import Decision, Judgement, Policy, ServerRules
from tui_agent.core.scripts import UNMARKED, CodeMode
from tui_agent.tools.hub import Hub

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@asynccontextmanager
async def coded(fake_llm: FakeLLM, tmp_path: Path, servers: dict[str, ServerConfig],
                gate: RecordingGate | None = None, rules: dict[str, ServerRules] | None = None,
                **settings: Any) -> AsyncIterator[Agent]:
    hub = Hub(servers, log_dir=tmp_path / "logs", default_timeout=20)
    hub.start()
    try:
        await hub.wait_all()
        yield Agent(LLM(model_for(fake_llm)), hub, gate or RecordingGate(),
                    policy=Policy(rules or {}),
                    code_mode=CodeMode(CodeModeSettings(enabled=True, **settings), servers))
    finally:
        await hub.close()


async def turn(agent: Agent, prompt: str = "go") -> list[Event]:
    return [event async for event in agent.run_turn(prompt)]


def script(code: str, call_id: str = "s1") -> Reply:
    return Reply(tool_calls=[FakeToolCall("executeToolCode", {"code": code}, id=call_id)])


def result_of(events: list[Event], call_id: str = "s1") -> ToolResult:
    return next(e for e in events if isinstance(e, ToolResult) and e.id == call_id)


def inner(events: list[Event], parent: str = "s1") -> list[ToolCallStarted]:
    return [e for e in events if isinstance(e, ToolCallStarted) and e.parent == parent]


AUTO_ADD = {"calc": ServerRules(auto=["add"])}


async def test_the_model_sees_meta_tools_instead_of_the_servers_tools(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("listToolFiles", {}, id="l1"),
                                    FakeToolCall("readToolFile", {"fileName": "calc"}, id="r1"),
                                    FakeToolCall("getToolDocs",
                                                 {"server": "calc", "tool": "add"}, id="d1")]),
                  Reply(text="read them"))
    servers = {"calc": fake_server(), "direct": fake_server(code_mode=False)}
    async with coded(fake_llm, tmp_path, servers) as agent:
        events = await turn(agent)
    offered = {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    assert {"listToolFiles", "readToolFile", "getToolDocs", "executeToolCode"} <= offered
    assert "direct__echo" in offered and not any(n.startswith("calc__") for n in offered)
    assert result_of(events, "l1").text.endswith("servers/calc.pyi")
    stub = result_of(events, "r1").text
    assert "def add(*, a: int, b: int) -> int: ..." in stub
    assert "# Usage: calc.add(a=0, b=0)" in stub
    docs = result_of(events, "d1").text
    assert docs.startswith("calc.add") and '"required"' in docs
    assert [e.decision for e in events if isinstance(e, ApprovalDecided)] == ["auto"] * 3
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"


async def test_a_script_chains_calls_across_two_servers(fake_llm: FakeLLM, tmp_path: Path) -> None:
    code = ('now = time.convert_time(source_timezone="UTC", time="12:00", '
            'target_timezone="Asia/Tokyo")\n'
            'print("converted", now["target"]["datetime"])\n'
            'total = calc.add(a=40, b=2)\n'
            'result = {"tokyo": now["target"]["datetime"], "sum": total, '
            '"echo": calc.echo(text="x" + str(total))}')
    fake_llm.push(script(code), Reply(text="done"))
    servers = {"calc": fake_server(),
               "time": ServerConfig(command=python_server("mcp-server-time"),
                                    args=["--local-timezone", "UTC"], env=tagged_env(),
                                    startup_timeout=START)}
    gate = RecordingGate()
    async with coded(fake_llm, tmp_path, servers, gate,
                     {"calc": ServerRules(auto=["add"]), "time": ServerRules(auto=["*"])}) as agent:
        events = await turn(agent)
    text = result_of(events).text
    assert not result_of(events).is_error, text
    value = json.loads(text.split("result: ", 1)[1].split("\ntool calls made")[0])
    assert value["sum"] == 42 and "T21:00:00" in value["tokyo"] and value["echo"] == "x42"
    assert "logs:\nconverted " in text and "tool calls made: 3" in text
    calls = inner(events)
    assert [(c.server, c.tool) for c in calls] == [("time", "convert_time"), ("calc", "add"),
                                                   ("calc", "echo")]
    assert [c.id for c in calls] == ["s1.1", "s1.2", "s1.3"]
    assert [a.arguments for a in gate.asked] == [{"text": "x42"}]  # only echo is not auto
    assert gate.asked[0].parent == "s1" and "calc.echo" in gate.asked[0].script
    # The script's events come before its own result, each inner call answered.
    ids = [e.id for e in events if isinstance(e, ToolResult)]
    assert ids == ["s1.1", "s1.2", "s1.3", "s1"]
    # The model sent the result, not the inner calls, back in one round trip.
    assert len(fake_llm.requests) == 2
    assert fake_llm.requests[1]["messages"][-1]["content"] == text


async def test_a_loop_of_twenty_calls(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(script("result = [calc.add(a=i, b=1) for i in range(20)]"), Reply(text="ok"))
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, rules=AUTO_ADD) as agent:
        events = await turn(agent)
    assert "result: [\n 1,\n 2," in result_of(events).text
    assert len(inner(events)) == 20 and "tool calls made: 20" in result_of(events).text


async def test_a_denied_call_stops_the_script_and_keeps_earlier_logs(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    code = ('print("step 1")\nx = calc.add(a=1, b=2)\nprint("step 2:", x)\n'
            'calc.echo(text="secret")\nprint("never")')
    fake_llm.push(script(code), Reply(text="I see it was denied"))
    gate = RecordingGate(Decision.deny("not that"))
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, gate, AUTO_ADD) as agent:
        events = await turn(agent)
    outcome = result_of(events)
    assert outcome.is_error
    assert outcome.text.startswith("error (denied) at line 4, column 1: denied: "
                                   'calc.echo(text="secret") was not run (not that)')
    assert outcome.text.endswith("logs printed before the failure:\nstep 1\nstep 2: 3")
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"


async def test_aliasing_dict_dispatch_and_getattr_still_ask(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    code = ('f = calc.echo\nf(text="alias")\nd = {"e": calc.echo}\nd["e"](text="dict")\n'
            'getattr(calc, "echo")(text="getattr")\n'
            'def sneaky(g):\n  return g(text="passed")\nsneaky(calc.echo)')
    fake_llm.push(script(code), Reply(text="ok"))
    gate = RecordingGate()
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, gate, AUTO_ADD) as agent:
        events = await turn(agent)
    assert not result_of(events).is_error, result_of(events).text
    assert [(a.tool, a.arguments["text"], a.parent) for a in gate.asked] == [
        ("echo", "alias", "s1"), ("echo", "dict", "s1"), ("echo", "getattr", "s1"),
        ("echo", "passed", "s1")]


async def test_approve_all_calls_of_this_script(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(script('result = [calc.add(a=i, b=1) for i in range(3)]'),  # read-only
                  script('result = calc.add(a=0, b=0)  # the next run asks again', "s2"),
                  Reply(text="ok"))
    gate = RecordingGate(Decision.approve(script=True), Decision.deny())
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, gate) as agent:
        events = await turn(agent)
    assert len(gate.asked) == 2 and gate.asked[1].parent == "s2", result_of(events).text
    decided = [(e.id, e.decision) for e in events if isinstance(e, ApprovalDecided)]
    assert decided[:4] == [("s1", "auto"), ("s1.1", "approved"), ("s1.2", "approved"),
                           ("s1.3", "approved")]
    assert result_of(events, "s2").is_error


async def test_s_does_not_approve_ahead_a_tool_that_may_be_destructive(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """MCP's destructiveHint defaults to true for a tool that is not read-only: echo says
    nothing of itself, so `s` approves only the call asked about, and each later call of
    echo asks too; add, marked read-only, is approved ahead."""
    fake_llm.push(script('calc.echo(text="1")\ncalc.add(a=1, b=1)\ncalc.add(a=2, b=2)\n'
                         'result = calc.echo(text="2")'), Reply(text="ok"))
    gate = RecordingGate(Decision.whole_script(), Decision.approve())
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, gate) as agent:
        events = await turn(agent)
    assert not result_of(events).is_error, result_of(events).text
    assert [(a.tool, a.script_tools, a.script_held) for a in gate.asked] == [
        ("echo", ("calc.add",), (("calc.echo", UNMARKED),)),
        ("echo", (), (("calc.echo", UNMARKED),))]


async def test_s_never_covers_a_tool_an_ask_rule_asks_for(fake_llm: FakeLLM,
                                                          tmp_path: Path) -> None:
    """Approving the script covers what only lacked an allowance: add (read-only) would be
    approved ahead, but an ask rule names it, so each of its calls asks, and the question
    says why."""
    from tui_agent.config.rule_text import RuleEntry
    from tui_agent.core.permissions.rules import RuleSet

    fake_llm.push(script('calc.add(a=1, b=1)\nresult = calc.add(a=2, b=2)'), Reply(text="ok"))
    gate = RecordingGate(Decision.whole_script(), Decision.approve())
    hub_servers = {"calc": fake_server()}
    async with coded(fake_llm, tmp_path, hub_servers, gate) as agent:
        agent.policy.permission = RuleSet([RuleEntry("ask", "mcp__calc__add")])
        events = await turn(agent)
    assert not result_of(events).is_error, result_of(events).text
    assert len(gate.asked) == 2  # the second call asked too
    first = gate.asked[0]
    assert first.script_tools == ()
    assert first.script_held == (("calc.add", 'ask rule "mcp__calc__add"'),)


class CountingPolicy(Policy):
    """The real policy, noting each judgement of a call made without arguments (how a
    question weighs the other tools a script names)."""

    def __init__(self, rules: dict[str, ServerRules]) -> None:
        super().__init__(rules)
        self.ahead: list[tuple[str, str]] = []

    def judge(self, server: str, tool: str, fp: str = "", *, asks: str = "",
              hints: Sequence[str] = (), arguments: Mapping[str, Any] | None = None
              ) -> Judgement:
        if arguments is None:
            self.ahead.append((server, tool))
        return super().judge(server, tool, fp, asks=asks, hints=hints, arguments=arguments)


async def test_each_tool_a_script_names_is_judged_once_per_question(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A question weighs the other tools the script names: whether each asks, and why it
    is held back. Each is judged once for both (the first question weighs add, which an
    ask rule names; the second, echo); the tool asked about is weighed by this call's
    judgement, not judged again."""
    from tui_agent.config.rule_text import RuleEntry
    from tui_agent.core.permissions.rules import RuleSet

    fake_llm.push(script('calc.echo(text="1")\nresult = calc.add(a=1, b=1)'), Reply(text="ok"))
    gate = RecordingGate(Decision.whole_script(), Decision.approve())
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, gate) as agent:
        policy = CountingPolicy({})
        policy.permission = RuleSet([RuleEntry("ask", "mcp__calc__add")])
        agent.policy = policy
        events = await turn(agent)
    assert not result_of(events).is_error, result_of(events).text
    first = gate.asked[0]
    assert (first.tool, first.script_tools) == ("echo", ())
    assert first.script_held == (("calc.echo", UNMARKED),
                                 ("calc.add", 'ask rule "mcp__calc__add"'))
    second = gate.asked[1]
    assert (second.tool, second.script_held) == ("add", (
        ("calc.add", 'ask rule "mcp__calc__add"'), ("calc.echo", UNMARKED)))
    # the tool asked about is weighed with this call's judgement; each other one, once
    assert policy.ahead == [("calc", "add"), ("calc", "echo")]


async def test_tool_errors_and_bad_arguments_name_the_call(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(script('print("before")\ncalc.structured_error()'),
                  script('calc.add(a=1, c=2)', "s2"), script('calc.add(1, 2)', "s3"),
                  Reply(text="ok"))
    async with coded(fake_llm, tmp_path, {"calc": fake_server()},
                     rules={"calc": ServerRules(auto=["*"])}) as agent:
        events = await turn(agent)
    first = result_of(events).text
    assert first.startswith("error (tool) at line 2, column 1: calc.structured_error() failed:")
    assert first.endswith("logs printed before the failure:\nbefore")
    assert "calc.add() got unexpected keyword argument(s) 'c'; its parameters are: a, b" in \
        result_of(events, "s2").text
    assert "keyword arguments only" in result_of(events, "s3").text


LIMITS = {
    "load": ('load("x.star", "y")', "error (runtime) at line 1, column 1: load() is not "
             "available"),
    "recursion": ("def f(n):\n  return f(n + 1)\nf(0)", "error (limit) at line 2, column 10: "
                  "call-stack depth: more than 200 nested calls"),
    "power": ('x = "x" * 10**9', "error (syntax) at line 1, column 13: Parse error: unexpected "
              "symbol '**' here (Starlark has no ** operator"),
    "memory": ('x = "x" * 1000000000', "error (limit): memory limit: the script needed more "
               "than 512 MB"),
    "steps": ("n = 0\nfor i in range(1000000000):\n  n += 1", "error (limit) at line 2, "
              "column 1: timeout: the script ran longer than 2 s"),
    "calls": ("for i in range(101):\n  calc.add(a=i, b=0)", "error (limit) at line 2, column "
              "3: tool-call limit: calc.add would be call 101, over the limit of 100"),
    "result": ('result = "x" * 100000000', "error (limit): the result is 100,000,002 bytes as "
               "JSON, over the max_output limit of 65,536 bytes"),
}


@pytest.mark.parametrize("case", list(LIMITS))
async def test_limits_end_in_their_documented_error(case: str, fake_llm: FakeLLM, tmp_path: Path,
                                                    no_leftover_servers: str) -> None:
    code, expected = LIMITS[case]
    fake_llm.push(script(code), Reply(text="the agent goes on"))
    # 2 s for the case that runs into it; the others get room (101 calls took over 2 s on
    # a loaded machine and ended in the timeout, not the call limit).
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}, rules=AUTO_ADD,
                     timeout=2 if case == "steps" else 60) as agent:
        events = await turn(agent)
        assert result_of(events).is_error
        assert result_of(events).text.startswith(expected), result_of(events).text
        assert isinstance(events[-1], TurnDone) and events[-1].reason == "end"
        assert fake_llm.requests[-1]["messages"][-1]["content"] == result_of(events).text
        servers = len(agent.tools.connections)  # type: ignore[attr-defined]
        # Only the MCP server is left: the script's child process is gone.
        assert len(tagged_processes(no_leftover_servers)) == servers


async def test_cancelling_the_turn_kills_the_script(fake_llm: FakeLLM, tmp_path: Path,
                                                    no_leftover_servers: str) -> None:
    fake_llm.push(script("n = 0\nfor i in range(1000000000):\n  n += 1"))
    async with coded(fake_llm, tmp_path, {"calc": fake_server()}) as agent:
        seen: list[Event] = []

        async def consume() -> None:
            async for event in agent.run_turn("go"):
                seen.append(event)

        task = asyncio.create_task(consume())
        deadline = time.monotonic() + 30  # a guard against a hang, not a speed check
        while len(tagged_processes(no_leftover_servers)) < 2:
            assert time.monotonic() < deadline, "the script never started"
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(tagged_processes(no_leftover_servers)) == 1
    tool_message = agent.messages[-1]
    assert tool_message["role"] == "tool" and "cancelled" in tool_message["content"]


def test_headless_code_mode_jsonl_and_text(fake_llm: FakeLLM, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           no_leftover_servers: str) -> None:
    """Also: the child started ahead of the next script is stopped with the run."""
    from tests.test_agent_tools import fake_entry, write_config
    from tui_agent.cli import main

    config = write_config(tmp_path / "c.toml", calc=fake_entry(auto=["add"]))
    code = 'print("adding")\nresult = calc.add(a=2, b=3) + 1\ncalc.echo(text="denied")'
    fake_llm.push(script(code), Reply(text="the script stopped at echo"))
    assert main(["run", "--config", str(config), "--model", "openai/fake-model", "--api-base",
                 fake_llm.base_url, "--approve", "deny", "--code-mode", "--output", "jsonl",
                 "go"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    calls = [(e["id"], e["name"], e["parent"]) for e in events if e["type"] == "tool_call"]
    assert calls == [("s1", "executeToolCode", None), ("s1.1", "calc__add", "s1"),
                     ("s1.2", "calc__echo", "s1")]
    approvals = [(e["id"], e["decision"]) for e in events if e["type"] == "approval"]
    assert approvals == [("s1", "auto"), ("s1.1", "auto"), ("s1.2", "denied")]
    result = next(e for e in events if e["type"] == "tool_result" and e["id"] == "s1")
    assert result["is_error"] and result["text"].startswith("error (denied) at line 3")
    assert result["text"].endswith("logs printed before the failure:\nadding")

    fake_llm.push(script('result = calc.add(a=1, b=1)'), Reply(text="two"))
    assert main(["run", "--config", str(config), "--model", "openai/fake-model", "--api-base",
                 fake_llm.base_url, "--approve", "deny", "--code-mode", "go"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "two\n"
    assert "→ executeToolCode (a script):\n    | result = calc.add(a=1, b=1)\n" \
           "    → calc__add {\"a\": 1, \"b\": 1}\n      ← 2\n  ← result: 2" in captured.err
