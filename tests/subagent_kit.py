"""What the sub-agent tests share: a parent and a child model on two scripted servers
(different ``api_base``s), settings read from a real config file (``[models."..."]`` gives
the child's model its own endpoint), agent files in the user's folder, and a parent agent
built by the wiring as the front ends build theirs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tui_agent.config import Settings, load, paths
from tui_agent.core.agent import Agent
from tui_agent.core.events import Event
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import Gate
from tui_agent.core.session import SessionWriter
from tui_agent.tools.spec import ToolSource
from tui_agent.wiring import build
from tui_agent.wiring.subagents import local_agents

PARENT = "openai/parent-model"
CHILD = "openai/child-model"
PARENT_USAGE = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
CHILD_USAGE = {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}

HELPER = f"""---
name: helper
description: Echoes things for the parent
tools: mcp__r__echo
model: {CHILD}
---
You are the helper. Echo what you are asked to, then report.
"""
"""The agent file most tests use: Claude Code's format, our server ``r``'s echo tool only,
on the child's model."""


@contextmanager
def two_models() -> Iterator[tuple[FakeLLM, FakeLLM]]:
    """The parent's and the child's scripted servers, on two ``api_base``s."""
    with FakeLLM(model="parent-model") as parent, FakeLLM(model="child-model") as child:
        yield parent, child


def config(tmp_path: Path, parent: FakeLLM, child: FakeLLM, extra: str = "") -> Settings:
    """Settings whose ``[model]`` is ``parent``'s and whose ``[models."CHILD"]`` points at
    ``child``'s server."""
    file = tmp_path / "config.toml"
    file.write_text(f"""
[model]
name = "{PARENT}"
api_base = "{parent.base_url}"
api_key = "sk-parent"
max_retries = 0
timeout = 30

[models."{CHILD}"]
api_base = "{child.base_url}"
api_key = "sk-child"
max_retries = 0
timeout = 30
{extra}
""", encoding="utf-8")
    return load(file, cwd=tmp_path)


def agent_file(name: str, text: str) -> Path:
    """An agent file in the user's ``agents/`` folder beside the config."""
    folder = paths.default_config_file().parent / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def parent_agent(settings: Settings, gate: Gate, tools: ToolSource | None = None,
                 session: SessionWriter | None = None, cwd: Path | None = None) -> Agent:
    agent = build.agent(settings, LLM(settings.model_for(None)), gate,
                        build.policy_from(settings), tools=tools, session=session, cwd=cwd)
    local_agents(settings, agent, cwd)
    return agent


def call_agent(call_id: str, prompt: str, agent: str | None = None) -> FakeToolCall:
    arguments: dict[str, Any] = {"prompt": prompt}
    if agent is not None:
        arguments["agent"] = agent
    return FakeToolCall("agent", arguments, id=call_id)


def reply(text: str = "", calls: Sequence[FakeToolCall] = (), usage: dict[str, Any] | None
          = None, **more: Any) -> Reply:
    return Reply(text=text, tool_calls=list(calls), usage=usage, **more)


async def turn(agent: Agent, prompt: str) -> list[Event]:
    return [event async for event in agent.run_turn(prompt)]


def tool_message(request: dict[str, Any], call_id: str) -> str:
    """The text of the ``tool`` message answering ``call_id`` in a request's messages."""
    found = [m for m in request["messages"] if m.get("role") == "tool"
             and m.get("tool_call_id") == call_id]
    assert found, f"no answer to {call_id} in {request['messages']}"
    content = found[0]["content"]
    return content if isinstance(content, str) else "".join(
        p.get("text", "") for p in content)


def tool_names(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}
