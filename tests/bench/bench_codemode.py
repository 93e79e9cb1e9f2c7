"""Code mode against classic tool calling, each figure against a baseline in the same run.

1. Tokens (a real tokenizer: tiktoken's o200k_base, the file litellm ships, so nothing
   is downloaded) of what the model reads about tools: every tool of five real servers
   (mcp-server-time, mcp-server-git, server-everything, our fake server, the demo's
   notes server) as classic tool definitions, against code mode's four meta-tools; the
   meta-tools plus the listing and one stub read; and plus every stub read. Target:
   code mode's definitions under 10% of classic.
2. A 10-step workflow (ten tool calls whose inputs chain) driven by the scripted LLM
   through the real agent with all five servers: LLM round trips, input tokens summed
   over every request, and wall time, classic against one script; classic also at the
   default max_depth (10), where it stops short. Target: 2 round trips against 11.
3. 100 tool calls made by one script (sandbox child, relay, policy, hub) against
   100 direct hub calls to the same server, as the app runs scripts (a child started
   ahead of the script). Target: within 1.3x.

    python -m tests.bench.bench_codemode [--calls 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tests.bench._common import ROOT, median, spread
from tests.conftest import TAG_VAR
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.fakes.tokens import tokens
from tests.reference import EVERYTHING
from tests.zygote import module
from tui_agent.codemode import spare
from tui_agent.config.models import AgentSettings, CodeModeSettings, ModelSettings, ServerConfig
from tui_agent.core.agent import Agent
from tui_agent.core.events import ErrorOccurred
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import ApproveAll, Policy, ServerRules
from tui_agent.core.scripts import CodeMode, run_script
from tui_agent.tools.hub import Hub
from tui_agent.tools.spec import ToolSpec


def catalog(tag: str, notes: Path) -> dict[str, ServerConfig]:
    """The five servers. The Python ones start through the test worker's zygote when the
    suite runs this (``python -m NAME`` otherwise): their start-up is not what is timed."""
    env = {TAG_VAR: tag}

    def python(name: str, *args: str, cwd: str | None = None) -> ServerConfig:
        command, *rest = module(name, *args)
        return ServerConfig(command=command, args=rest, cwd=cwd, env=env)

    servers = {
        "time": python("mcp_server_time"),
        "git": python("mcp_server_git"),
        "calc": python("tests.fakes.mcp_server", cwd=str(ROOT)),
        "notes": python("tui_agent.demo.server", str(notes)),
    }
    if EVERYTHING.exists():
        servers["everything"] = ServerConfig(command=str(EVERYTHING), args=["stdio"], env=env)
    return servers


async def definitions(hub: Hub) -> None:
    specs = hub.specs()
    code = CodeMode(CodeModeSettings(enabled=True))
    meta = code.offered({s.name: s for s in specs})
    tree = code.stubs
    classic = tokens([s.to_openai() for s in specs])
    coded = tokens([s.to_openai() for s in meta.values()])
    listing = tokens(code.answer("listToolFiles", {}).text)
    files = {name: tokens(text) for name, text in tree.files.items()}
    one = files[max(files, key=lambda n: n.endswith("/calc.pyi"))]
    servers = len({s.server for s in specs})
    print(f"1. tool tokens (tiktoken o200k_base), {servers} servers / {len(specs)} tools:")
    print(f"   classic, every tool definition in every request: {classic:,}")
    print(f"   code mode, the four meta-tools in every request: {coded:,} "
          f"-> ratio code/classic {coded / classic:.3f} (target < 0.10)")
    print(f"   code mode, + the listing ({listing:,}) + one stub read (calc.pyi, {one:,}): "
          f"{coded + listing + one:,}")
    print(f"   code mode, + the listing + every stub read ({len(files)} files, "
          f"{sum(files.values()):,}): {coded + listing + sum(files.values()):,}")


def model(fake: FakeLLM) -> ModelSettings:
    return ModelSettings(name="openai/fake-model", api_base=fake.base_url, api_key="x",
                         max_retries=0, timeout=20)


def request_tokens(requests: list[dict[str, Any]]) -> int:
    """Input tokens of every request: its messages and its tool definitions."""
    return sum(tokens(r.get("messages", [])) + tokens(r.get("tools", [])) for r in requests)


async def workflow(hub: Hub, servers: dict[str, ServerConfig], rounds: int) -> None:
    """Ten chained add calls: x = add(x, i) for i in 1..10, with all five servers."""
    policy = Policy({"calc": ServerRules(auto=["add"])})
    script = "x = 0\nfor i in range(1, 11):\n  x = calc.add(a=x, b=i)\nresult = x"
    kinds = {"classic": 20, "code mode": 20, "classic at max_depth 10": 10}
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    trips: dict[str, int] = {}
    spent: dict[str, int] = {}
    stopped: dict[str, str] = {}
    with FakeLLM() as fake:
        for _ in range(rounds):
            for kind, depth in kinds.items():
                fake.requests.clear()
                if kind.startswith("classic"):
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
                              settings=AgentSettings(max_depth=depth),
                              code_mode=CodeMode(CodeModeSettings(
                                  enabled=kind == "code mode"), servers))
                started = time.perf_counter()
                async for event in agent.run_turn("add 1..10"):
                    if isinstance(event, ErrorOccurred):
                        stopped[kind] = event.message.split(":")[0]
                times[kind].append(time.perf_counter() - started)
                trips[kind] = len(fake.requests)
                spent[kind] = request_tokens(fake.requests)
                fake.drop_pending()
    print("2. a 10-step workflow through the agent and the scripted LLM, five servers:")
    for kind in times:
        note = f" ({stopped[kind]})" if kind in stopped else ""
        print(f"   {kind:23}: {trips[kind]:2} LLM round trips, {spent[kind]:7,} input tokens, "
              f"wall {spread(times[kind])} s{note}")
    print(f"   -> round trips code/classic {trips['code mode']} vs {trips['classic']} "
          f"(target 2 vs 11), input tokens {spent['code mode']:,} vs {spent['classic']:,}")


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
            assert agent.code_mode is not None
            outcome = await run_script(agent, agent.code_mode, "bench", {"code": script},
                                       lambda event: None)
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
        servers = catalog(tag, Path(tmp) / "notes")
        # One hub for figures 1 and 2: five servers' start-up is seconds of CPU, and
        # neither figure times it.
        async with Hub(servers, log_dir=Path(tmp) / "logs") as hub:
            await hub.wait_all()
            await definitions(hub)
            await workflow(hub, servers, args.rounds)
        await hundred(tag, Path(tmp), args.calls, args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
