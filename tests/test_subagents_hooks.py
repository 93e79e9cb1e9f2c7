"""Claude Code's ``SubagentStart`` and ``SubagentStop`` hooks around a sub-agent, with a
hook script written as Claude Code's hooks documentation shows one (JSON on stdin,
``hookSpecificOutput.additionalContext`` and ``decision: "block"`` on stdout): the start's
context is the sub-agent's before its task, a blocked stop sends the sub-agent back to work
with the reason, both match on the agent's name, and the parent's own ``Stop`` still fires
for the parent alone. End to end on two scripted models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.hook_kit import hooks_toml, script, seen
from tests.subagent_kit import (
    CHILD,
    agent_file,
    call_agent,
    config,
    parent_agent,
    reply,
    tool_message,
    turn,
    two_models,
)
from tests.test_agent import RecordingGate
from tui_agent.core.subagents.run import START_CONTEXT
from tui_agent.wiring import build

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HOOK_PY = r"""#!/usr/bin/env python3
import json
import pathlib
import sys

data = json.load(sys.stdin)
with pathlib.Path(__file__).with_name("seen.jsonl").open("a") as log:
    log.write(json.dumps(data) + "\n")
event = data["hook_event_name"]
if event == "SubagentStart":
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "SubagentStart",
        "additionalContext": "This repository indents with tabs."}}))
elif event == "SubagentStop" and not data["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "Run the tests first."}))
"""

NEVER_SH = """#!/bin/bash
touch "$(dirname "$0")/never-ran"
"""


@pytest.fixture
def models() -> Iterator[tuple[FakeLLM, FakeLLM]]:
    with two_models() as both:
        yield both


async def test_subagent_start_adds_context_and_subagent_stop_sends_it_back_once(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    parent, child = models
    parent.push(reply(calls=[call_agent("h1", "Write the parser.", "writer")]),
                reply("The writer is done."))
    child.push(reply("Draft one."), reply("Draft two, tests run."))
    agent_file("writer", f"---\nname: writer\ndescription: Writes\nmodel: {CHILD}\n---\n"
               "Write code.\n")
    hook = str(script(tmp_path, "hook.py", HOOK_PY))
    never = str(script(tmp_path, "never.sh", NEVER_SH))
    extra = (hooks_toml("SubagentStart", hook, "writer")
             + hooks_toml("SubagentStop", hook, "writer")
             + hooks_toml("SubagentStop", never, "reviewer")  # another agent's: not run
             + hooks_toml("Stop", hook))
    settings = config(tmp_path, parent, child, extra)
    writer = build.new_session(settings, "openai/parent-model", tmp_path / "s" / "conv.jsonl")
    agent = parent_agent(settings, RecordingGate(), session=writer, cwd=tmp_path)
    await turn(agent, "go")
    writer.close()

    first = child.requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user", "user"]
    assert first[1]["content"] == f"{START_CONTEXT}\nThis repository indents with tabs."
    assert first[2]["content"] == "Write the parser."
    again = child.requests[1]["messages"]
    assert "Run the tests first." in str(again[-1]["content"]) and again[-1]["role"] == "user"
    assert len(child.requests) == 2, "allowed to stop the second time (stop_hook_active)"
    assert tool_message(parent.requests[1], "h1").startswith("Draft two, tests run.")

    inputs = seen(tmp_path)
    assert [(i["hook_event_name"], i.get("stop_hook_active")) for i in inputs] == [
        ("SubagentStart", None), ("SubagentStop", False), ("SubagentStop", True),
        ("Stop", False)]
    start, stop, _, parents = inputs
    assert (start["agent_id"], start["agent_type"]) == ("h1", "writer")
    assert (stop["agent_id"], stop["agent_type"]) == ("h1", "writer")
    assert stop["last_assistant_message"] == "Draft one."
    assert stop["agent_transcript_path"] == str(tmp_path / "s" / "conv.agents" / "h1.jsonl")
    for each in inputs:  # the main conversation's, as Claude Code sends them
        assert each["session_id"] == writer.id
        assert each["transcript_path"] == str(writer.path)
    assert parents["last_assistant_message"] == "The writer is done."
    assert "agent_id" not in parents
    assert not (tmp_path / "never-ran").exists()


async def test_a_subagent_start_hook_that_blocks_is_heard_and_the_agent_still_runs(
        models: tuple[FakeLLM, FakeLLM], tmp_path: Path) -> None:
    """``SubagentStart`` cannot stop a sub-agent (Claude Code's rule): exit 2 is shown."""
    parent, child = models
    parent.push(reply(calls=[call_agent("h1", "Go.", "writer")]), reply("ok"))
    child.push(reply("Ran anyway."))
    agent_file("writer", f"---\nname: writer\ndescription: Writes\nmodel: {CHILD}\n---\nW.\n")
    blocker = script(tmp_path, "block.sh", "#!/bin/bash\necho 'not now' >&2\nexit 2\n")
    agent = parent_agent(config(tmp_path, parent, child,
                                hooks_toml("SubagentStart", str(blocker))),
                         RecordingGate(), cwd=tmp_path)
    events = await turn(agent, "go")
    said = [getattr(e, "message", "") for e in events if e.agent is not None]
    assert "a SubagentStart hook said: not now" in said
    assert tool_message(parent.requests[1], "h1").startswith("Ran anyway.")
