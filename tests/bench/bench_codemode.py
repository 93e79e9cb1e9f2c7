"""Code mode against classic tool calling, each figure against a baseline in the same run.

1. Tokens of tool definitions per request (litellm's token counter): every tool of
   five real servers (mcp-server-time, mcp-server-git, server-everything, our fake
   server, the demo's notes server) as classic tools, against the four meta-tools.
   Target: code mode under 10% of classic.
2. A 10-step workflow (ten tool calls whose inputs chain) driven by the scripted
   LLM through the real agent: LLM round trips and wall time, classic against one
   script. Target: 2 round trips against 11.
3. 100 tool calls made by one script (sandbox child, relay, policy, hub) against
   100 direct hub calls to the same server, as the app runs scripts (a child started
   ahead of the script). Target: within 1.3x.

    python -m tests.bench.bench_codemode [--calls 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tests.bench._common import ROOT, median, spread
from tests.conftest import TAG_VAR
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import EVERYTHING
from tui_agent.codemode import spare
from tui_agent.config.models import AgentSettings, CodeModeSettings, ModelSettings, ServerConfig
from tui_agent.core.agent import Agent
from tui_agent.core.approval import ApproveAll, Policy, ServerRules
from tui_agent.core.events import ErrorOccurred
from tui_agent.core.llm import LLM
from tui_agent.core.scripts import CodeMode
from tui_agent.tools.hub import Hub
from tui_agent.tools.spec import ToolSpec

BIN = Path(sys.executable).parent


def catalog(tag: str, notes: Path) -> dict[str, ServerConfig]:
    env = {TAG_VAR: tag}
    servers = {
        "time": ServerConfig(command=str(BIN / "mcp-server-time"), env=env),
        "git": ServerConfig(command=str(BIN / "mcp-server-git"), env=env),
        "calc": ServerConfig(command=sys.executable, args=["-m", "tests.fakes.mcp_server"],
                             cwd=str(ROOT), env=env),
        "notes": ServerConfig(command=sys.executable,
                              args=["-m", "tui_agent.demo.server", str(notes)], env=env),
    }
    if EVERYTHING.exists():
        servers["everything"] = ServerConfig(command=str(EVERYTHING), args=["stdio"], env=env)
    return servers


def tokens(tools: list[dict[str, Any]]) -> int:
    import litellm

    messages = [{"role": "user", "content": "hello"}]
    base = int(litellm.token_counter(model="gpt-4o-mini", messages=messages))
    return int(litellm.token_counter(model="gpt-4o-mini", messages=messages, tools=tools)) - base


async def definitions(tag: str, tmp: Path) -> None:
    async with Hub(catalog(tag, tmp / "notes"), log_dir=tmp / "logs") as hub:
        await hub.wait_all()
        specs = hub.specs()
        code = CodeMode(CodeModeSettings(enabled=True))
        meta = code.offered({s.name: s for s in specs})
    classic = tokens([s.to_openai() for s in specs])
    coded = tokens([s.to_openai() for s in meta.values()])
    servers = len({s.server for s in specs})
    print(f"1. tool definitions per request, {servers} servers / {len(specs)} tools:")
    print(f"   classic {classic:,} tokens, code mode {coded:,} tokens "
          f"-> ratio code/classic {coded / classic:.3f} (target < 0.10)")


def model(fake: FakeLLM) -> ModelSettings:
    return ModelSettings(name="openai/fake-model", api_base=fake.base_url, api_key="x",
                         max_retries=0, timeout=20)


async def workflow(tag: str, tmp: Path, rounds: int) -> None:
    """Ten chained add calls: x = add(x, i) for i in 1..10."""
    servers = {"calc": catalog(tag, tmp)["calc"]}
    policy = Policy({"calc": ServerRules(auto=["add"])})
    script = "x = 0\nfor i in range(1, 11):\n  x = calc.add(a=x, b=i)\nresult = x"
    times: dict[str, list[float]] = {"classic": [], "code mode": []}
    trips: dict[str, int] = {}
    async with Hub(servers, log_dir=tmp / "logs") as hub:
        await hub.wait_all()
        with FakeLLM() as fake:
            for _ in range(rounds):
                for kind in ("classic", "code mode"):
                    fake.requests.clear()
                    if kind == "classic":
                        x = 0
                        for i in range(1, 11):
                            fake.push(Reply(tool_calls=[FakeToolCall(
                                "calc__add", {"a": x, "b": i}, id=f"c{i}")]))
                            x += i
                    else:
                        fake.push(Reply(tool_calls=[FakeToolCall(
                            "executeToolCode", {"code": script}, id="s")]))
                    fake.push(Reply(text="55"))
                    agent = Agent(LLM(model(fake)), hub, ApproveAll(), policy=policy,
                                  settings=AgentSettings(max_depth=20),
                                  code_mode=CodeMode(CodeModeSettings(
                                      enabled=kind == "code mode"), servers))
                    started = time.perf_counter()
                    async for event in agent.run_turn("add 1..10"):
                        if isinstance(event, ErrorOccurred):
                            print(f"   ({kind}: {event.message})")
                    times[kind].append(time.perf_counter() - started)
                    trips[kind] = len(fake.requests)
    print("2. a 10-step workflow through the agent and the scripted LLM:")
    for kind in times:
        print(f"   {kind:9}: {trips[kind]} LLM round trips, wall {spread(times[kind])} s")
    print(f"   -> round trips code/classic {trips['code mode']} vs {trips['classic']} "
          "(target 2 vs 11)")



async def hundred(tag: str, tmp: Path, calls: int, rounds: int) -> None:
    servers = {"calc": catalog(tag, tmp)["calc"]}
    policy = Policy({"calc": ServerRules(auto=["add"])})
    script = f"result = [calc.add(a=i, b=1) for i in range({calls})]"
    direct: list[float] = []
    scripted: list[float] = []
    async with Hub(servers, log_dir=tmp / "logs") as hub:
        await hub.wait_all()
        spec: ToolSpec = next(s for s in hub.specs() if s.name == "calc__add")
        agent = Agent(LLM(ModelSettings(name="openai/unused")), hub, ApproveAll(), policy=policy,
                      code_mode=CodeMode(CodeModeSettings(enabled=True), servers, warm=True))
        agent._offered()  # builds the stub tree and starts a child ahead, as a turn would
        await asyncio.sleep(0.2)  # the model's reply takes longer than the child's start
        for _ in range(rounds):
            started = time.perf_counter()
            for i in range(calls):
                await hub.call(spec, {"a": i, "b": 1})
            direct.append(time.perf_counter() - started)
            started = time.perf_counter()
            outcome = await agent._script("bench", {"code": script}, lambda event: None)
            scripted.append(time.perf_counter() - started)
            assert not outcome.is_error, outcome.text
            await asyncio.sleep(0.2)  # the next reply: the next child is started meanwhile
        await spare.close()
    print(f"3. {calls} tool calls, {rounds} rounds:")
    print(f"   direct hub calls: {spread(direct)} s")
    print(f"   one script      : {spread(scripted)} s (child start, relay, policy, hub)")
    print(f"   -> ratio script/direct {median(scripted) / median(direct):.2f}x (target <= 1.3x)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    tag = uuid.uuid4().hex
    os.environ[TAG_VAR] = tag
    with tempfile.TemporaryDirectory() as tmp:
        await definitions(tag, Path(tmp))
        await workflow(tag, Path(tmp), args.rounds)
        await hundred(tag, Path(tmp), args.calls, args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
