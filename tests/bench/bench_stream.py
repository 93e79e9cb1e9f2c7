"""Overhead of our loop per streamed token, against consuming litellm's stream directly.

Both sides stream the same reply from the same fake server (its own process), in
the same run, interleaved so that machine noise hits both alike. Ours is the
full path: ``Agent.run_turn`` with a session file being written.

    python -m tests.bench.bench_stream [--tokens 2000] [--rounds 7]

Target (issue 2): ratio within 1.1x.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from tests.bench._common import fake_server, median, spread
from tui_agent.config.models import ModelSettings

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def settings(base_url: str) -> ModelSettings:
    return ModelSettings(name="openai/fake-model", api_base=base_url, api_key="k")


async def direct(base_url: str) -> tuple[float, float, int]:
    """The same request our client sends, consumed bare: only our loop differs."""
    from tui_agent.core.llm import LLM, load_litellm

    litellm = load_litellm()
    request = LLM(settings(base_url))._request([{"role": "user", "content": "go"}], [])
    started, cpu = time.perf_counter(), time.process_time()
    response = await litellm.acompletion(**request)
    tokens = 0
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            tokens += 1
    return time.perf_counter() - started, time.process_time() - cpu, tokens


async def ours(base_url: str, directory: Path) -> tuple[float, float, int]:
    from tui_agent.core.agent import Agent
    from tui_agent.core.events import TextDelta
    from tui_agent.core.llm import LLM
    from tui_agent.core.permissions import DenyAll
    from tui_agent.core.session import SessionStore, SessionWriter
    from tui_agent.tools.local import NoTools

    store = SessionStore(directory)
    writer = SessionWriter.create(store.new_path(), {"model": "bench"})
    llm = LLM(settings(base_url))
    await asyncio.to_thread(llm.check)
    agent = Agent(llm, NoTools(), DenyAll(), session=writer)
    started, cpu = time.perf_counter(), time.process_time()
    tokens = 0
    async for event in agent.run_turn("go"):
        if isinstance(event, TextDelta):
            tokens += 1
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    writer.close()
    return elapsed, cpu, tokens


async def measure(tokens: int, rounds: int) -> dict[str, float]:
    with fake_server(tokens) as url, tempfile.TemporaryDirectory() as tmp:
        await direct(url)  # warm both paths: imports, connection pools
        await ours(url, Path(tmp))
        runs: dict[str, list[tuple[float, float, int]]] = {"direct": [], "ours": []}
        for i in range(rounds):  # alternate who goes first, so drift hits both
            for name in (("direct", "ours") if i % 2 == 0 else ("ours", "direct")):
                runs[name].append(await direct(url) if name == "direct"
                                  else await ours(url, Path(tmp)))
    counts = {n for r in runs.values() for _, _, n in r}
    assert counts == {tokens}, f"token counts differ: {counts}"
    print(f"stream of {tokens} tokens, {rounds} rounds each, interleaved, same request")
    result: dict[str, float] = {}
    for label, index in (("wall", 0), ("cpu", 1)):
        base = [r[index] for r in runs["direct"]]
        mine = [r[index] for r in runs["ours"]]
        b, m = median(base), median(mine)
        print(f"  {label:4} litellm directly : {spread(base)} s")
        print(f"  {label:4} our agent loop   : {spread(mine)} s")
        print(f"  {label:4} ratio ours/direct: {m / b:.3f}x (medians; target within 1.10x), "
              f"{(m - b) / tokens * 1e6:+.1f} µs per token")
        result[label] = m / b
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    asyncio.run(measure(args.tokens, args.rounds))


if __name__ == "__main__":
    main()
