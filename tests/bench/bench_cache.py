"""Prompt caching over a long tool conversation against the Anthropic fake, each figure
against a baseline in the same run.

The real agent (litellm, the calculator tool, thinking on) holds a conversation of
``--turns`` turns with ``anthropic/claude-sonnet-4-5`` served by
``tests/fakes/anthropic_server.py``, which caches a prompt's prefix up to each
``cache_control`` breakpoint as Anthropic does and checks every thinking block's
signature. Each turn is a tool call and an answer (two requests). Run twice: with
``[model] prompt_cache`` on (the default) and off.

Printed: the prompt tokens, those read from and written to the cache, the share read
(target: at least 80% with caching on), and the cost litellm's usage-aware pricing gives
for each run.

    python -m tests.bench.bench_cache [--turns 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.fakes.anthropic_server import AnthropicFake, Reply, ToolUse  # noqa: E402
from tests.test_agent import calculator  # noqa: E402
from tui_agent.config.models import ModelSettings  # noqa: E402
from tui_agent.core.agent import Agent  # noqa: E402
from tui_agent.core.events import TurnDone, Usage  # noqa: E402
from tui_agent.core.llm import LLM  # noqa: E402
from tui_agent.core.permissions import ApproveAll  # noqa: E402


def script(turns: int) -> list[Reply]:
    replies = []
    for i in range(turns):
        replies.append(Reply(thinking=f"I add {i} and 1 with the tool.",
                             tool_uses=[ToolUse("local__add", {"a": i, "b": 1})]))
        replies.append(Reply(thinking="Now I answer.",
                             text=f"The sum is {i + 1}. " + "More words. " * 30))
    return replies


async def conversation(turns: int, cache: bool) -> Usage:
    total = Usage()
    with AnthropicFake(script(turns)) as fake:
        llm = LLM(ModelSettings(name="anthropic/claude-sonnet-4-5", api_base=fake.base_url,
                                api_key="x", max_retries=0, prompt_cache=cache,
                                reasoning_effort="low"))
        agent = Agent(llm, calculator(), ApproveAll(),
                      system_prompt="You are a careful assistant. " * 150)
        for i in range(turns):
            events = [e async for e in agent.run_turn(f"Add {i} and 1. " + "context " * 50)]
            done = events[-1]
            if not isinstance(done, TurnDone) or done.reason != "end":
                raise SystemExit(f"turn {i + 1} failed: {events[-2:]}")
            total = total + done.usage
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    turns = parser.parse_args().turns
    for cache in (True, False):
        u = asyncio.run(conversation(turns, cache))
        share = u.cache_read_tokens / u.prompt_tokens if u.prompt_tokens else 0.0
        cost = "unknown" if u.cost is None else f"${u.cost:.4f}"
        print(f"prompt_cache={'on ' if cache else 'off'}: {turns} turns, "
              f"{u.prompt_tokens:,} prompt tokens, {u.cache_read_tokens:,} read from cache, "
              f"{u.cache_write_tokens:,} written; share read {share:.0%}"
              f"{' (target >= 80%)' if cache else ''}; cost {cost}")


if __name__ == "__main__":
    main()
