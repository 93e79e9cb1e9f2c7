"""Sub-agents in parallel (issue 50): four sub-agents started by one model reply, each on
its own scripted model (its own server, a fixed delay before every streamed chunk, replies
of 10, 20, 30 and 40 chunks), against the slowest of them started alone. Measured: from
the first ``agent_start`` to the last ``agent_end`` of the parent's turn, through the
real agent, wiring and litellm. Printed: both times and their ratio (target: at most
1.2x, i.e. the four run at once and the slowest decides).

    python -m tests.bench.bench_subagents [--delay 0.02] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from tests.bench._common import median, spread
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tui_agent.config import load, paths
from tui_agent.core.events import AgentFinished, AgentStarted
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import ApproveAll
from tui_agent.wiring import build
from tui_agent.wiring.subagents import local_agents

CHUNKS = (10, 20, 30, 40)


def setup(folder: Path, parent: FakeLLM, children: list[FakeLLM]) -> Path:
    """The config (the parent's model, each child's ``[models]`` table) and one agent
    file per child, in the user's folder."""
    agents = paths.default_config_file().parent / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    tables = []
    for i, child in enumerate(children):
        (agents / f"worker{i}.md").write_text(
            f"---\ndescription: Worker {i}\nmodel: openai/child-{i}\ntools: []\n---\n"
            "Answer at once.\n", encoding="utf-8")
        tables.append(f'[models."openai/child-{i}"]\napi_base = "{child.base_url}"\n'
                      'api_key = "sk-bench"\n')
    config = folder / "config.toml"
    config.write_text(f'[model]\nname = "openai/parent"\napi_base = "{parent.base_url}"\n'
                      'api_key = "sk-bench"\n\n[agents]\nmax_parallel = 4\n\n'
                      + "\n".join(tables), encoding="utf-8")
    return config


async def one_turn(config: Path, parent: FakeLLM, workers: list[int]) -> float:
    """Seconds from the first sub-agent's start to the last one's end."""
    settings = load(config, cwd=config.parent)
    calls = [FakeToolCall("agent", {"agent": f"worker{i}", "prompt": "go"}, id=f"w{i}")
             for i in workers]
    parent.push(Reply(tool_calls=calls), Reply(text="done"))
    agent = build.agent(settings, LLM(settings.model_for(None)), ApproveAll(),
                        build.policy_from(settings), cwd=config.parent)
    local_agents(settings, agent, config.parent)
    first = last = 0.0
    async for event in agent.run_turn("delegate"):
        if isinstance(event, AgentStarted) and not first:
            first = time.perf_counter()
        elif isinstance(event, AgentFinished):
            last = time.perf_counter()
    return last - first


async def bench(delay: float, runs: int) -> tuple[list[float], list[float]]:
    servers = [FakeLLM(model=f"child-{i}", repeat=Reply(
        text="".join(f"{j:04d}" for j in range(n)), chunk_chars=4, delay=delay))
        for i, n in enumerate(CHUNKS)]
    with FakeLLM(model="parent") as parent:
        for server in servers:
            server.start()
        try:
            with tempfile.TemporaryDirectory() as folder:
                config = setup(Path(folder), parent, servers)
                await one_turn(config, parent, [3])  # warm: litellm's first import and call
                alone = [await one_turn(config, parent, [3]) for _ in range(runs)]
                four = [await one_turn(config, parent, [0, 1, 2, 3]) for _ in range(runs)]
        finally:
            for server in servers:
                server.stop()
    return alone, four


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.02,
                        help="seconds before every streamed chunk (default 0.02)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                         ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")):
            os.environ[var] = str(Path(home) / sub)
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ["TUI_AGENT_NO_BUILTIN"] = "1"
        alone, four = asyncio.run(bench(args.delay, args.runs))
    ratio = median(four) / median(alone)
    print(f"slowest sub-agent alone ({CHUNKS[-1]} chunks x {args.delay:g} s): "
          f"{spread(alone, 1000)} ms")
    print(f"four sub-agents in parallel ({', '.join(map(str, CHUNKS))} chunks): "
          f"{spread(four, 1000)} ms")
    print(f"ratio (medians): {ratio:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
