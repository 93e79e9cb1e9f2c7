"""A long conversation against a provider with an 8,192-token window, each figure against
a baseline in the same run.

The scripted OpenAI-compatible server runs in its own process with ``--window 8192``: it
counts every request with its own tokenizer (tiktoken o200k_base, not the cl100k_base
tui-agent counts an unknown model with) and refuses a longer one with OpenAI's 400
``context_length_exceeded``, as a real provider does. The real agent (litellm, the
session file on disk) sends 200 turns of about 2 KB each (a 1.5 KB message, a 0.5 KB
reply), with ``[model] context_window = 8192`` and the default ``compact_at = 0.8``.

Printed: turns completed; the largest request the server saw against the window, and
how many it refused; the time per turn over turns 181-200 against turns 1-20 (medians,
turns that compacted left out; target within 1.5x); resident memory at turn 200 against turn
10 (target within 1.5x); compactions, and LLM requests against turns + compactions
(target: exactly one extra request per compaction).

    python -m tests.bench.bench_compaction [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.bench._common import env, median
from tests.fakes.tokens import prose
from tui_agent.config.models import AgentSettings, ModelSettings
from tui_agent.core.agent import Agent
from tui_agent.core.events import Compacted, ContextSize, TurnDone
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import Decision, PendingCall
from tui_agent.core.session import SessionWriter, load
from tui_agent.tools.local import NoTools

WINDOW = 8192
SUMMARY = ("Summary: the user has sent a series of numbered field notes (alpha, bravo, "
           "charlie ...) and asked for each to be acknowledged; every one was. No file was "
           "touched, no tool was used, nothing is open. ") * 3


class DenyAll:
    asks_person = False

    async def decide(self, call: PendingCall) -> Decision:
        return Decision.deny("benchmark")


def message(turn: int, size: int = 1500) -> str:
    return prose(size, turn)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@contextmanager
def provider() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.llm_server", "--tokens", "128", "--window",
         str(WINDOW), "--summary", SUMMARY], stdout=subprocess.PIPE, text=True, env=env())
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().split()[3]
    finally:
        proc.terminate()
        proc.wait(10)


def stats(base_url: str) -> dict[str, int]:
    with urllib.request.urlopen(f"{base_url}/stats", timeout=10) as answer:
        return dict(json.load(answer))


async def conversation(base_url: str, turns: int, directory: Path) -> None:
    writer = SessionWriter.create(directory / "bench.jsonl", {})
    llm = LLM(ModelSettings(name="openai/fake-model", api_base=base_url, api_key="sk-bench",
                            context_window=WINDOW, max_retries=0, timeout=60))
    agent = Agent(llm, NoTools(), DenyAll(), session=writer, settings=AgentSettings())
    took: list[float] = []
    compacted_at: set[int] = set()
    memory: dict[int, float] = {}
    sizes: list[int] = []
    compactions: list[Compacted] = []
    ended = 0
    for n in range(1, turns + 1):
        started = time.perf_counter()
        async for event in agent.run_turn(message(n)):
            if isinstance(event, Compacted):
                compactions.append(event)
                compacted_at.add(n)
            elif isinstance(event, ContextSize):
                sizes.append(event.tokens)
            elif isinstance(event, TurnDone) and event.reason == "end":
                ended += 1
        took.append(time.perf_counter() - started)
        memory[n] = rss_mb()
    writer.close()
    served = stats(base_url)
    saved = load(writer.path)

    def between(first: int, last: int) -> list[float]:
        return [took[t - 1] for t in range(max(1, first), min(turns, last) + 1)
                if t not in compacted_at]

    # A turn's time follows its request's size, which climbs between two compactions:
    # each figure is the median over 20 turns (two such climbs), compaction turns left out.
    early, late = median(between(1, 20)), median(between(turns - 19, turns))
    compacting = median([took[t - 1] for t in compacted_at]) if compacted_at else 0.0
    print(f"1. turns completed: {ended} of {turns} (about 2 KB each: a 1.5 KB message, "
          f"a 0.5 KB reply)")
    print(f"2. largest request the provider counted: {served['largest']:,} tokens of "
          f"{WINDOW:,}; refused: {served['refused']}; our largest estimate: {max(sizes):,}")
    print(f"3. time per turn (median of 20, compaction turns left out): turns 1-20 "
          f"{early * 1000:.1f} ms, turns {turns - 19}-{turns} {late * 1000:.1f} ms "
          f"-> ratio {late / early:.2f}x (target <= 1.5x); a turn that compacts: "
          f"{compacting * 1000:.1f} ms")
    print(f"4. resident memory: turn 10 {memory[min(10, turns)]:.1f} MB, turn {turns} "
          f"{memory[turns]:.1f} MB -> ratio {memory[turns] / memory[min(10, turns)]:.2f}x "
          "(target <= 1.5x)")
    extra = served["requests"] - turns
    tokens = sum(c.usage.total_tokens for c in compactions)
    print(f"5. compactions: {len(compactions)} (every {turns / max(1, len(compactions)):.1f} "
          f"turns, {tokens:,} tokens in all); LLM requests {served['requests']} = {turns} "
          f"turns + {extra} -> {extra / max(1, len(compactions)):.2f} extra request per "
          "compaction (target 1.00)")
    print(f"6. on disk: {len(saved.entries)} messages of {2 * turns} kept, "
          f"{len(saved.compactions)} compactions recorded")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    with provider() as base_url, tempfile.TemporaryDirectory() as tmp:
        asyncio.run(conversation(base_url, args.turns, Path(tmp)))


if __name__ == "__main__":
    main()
