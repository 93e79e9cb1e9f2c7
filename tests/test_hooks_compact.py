"""PreCompact hooks on ``/compact`` (trigger ``manual``, with the instructions): an exit 2
keeps the conversation as it is with the hook's reason shown; a hook that lets it go sees
the compaction, and SessionStart fires after it with source ``compact``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hook_kit import script
from tests.test_compaction import Summarizing, agent_for, turn, words
from tui_agent.core.events import Compacted, Notice
from tui_agent.core.hooks import Hooks
from tui_agent.custom.hooks import HookCommand, HookConfig, HookGroup

pytestmark = pytest.mark.anyio


def hooks(tmp_path: Path, **commands: str) -> Hooks:
    groups = tuple(HookGroup(event, "", (HookCommand(command),))
                   for event, command in commands.items())
    return Hooks(HookConfig(groups), cwd=tmp_path, project_dir=tmp_path)


async def test_a_pre_compact_hook_blocks_or_sees_a_compaction(tmp_path: Path) -> None:
    log = tmp_path / "seen.jsonl"
    gate = script(tmp_path, "precompact.sh", "#!/bin/bash\nINPUT=$(cat)\n"
                  f"echo \"$INPUT\" >> {log}\n"
                  f"if [ -e {tmp_path / 'block'} ]; then\n"
                  "  echo 'a checkpoint is being written' >&2\n  exit 2\nfi\n")
    with Summarizing(window=None) as server:
        agent = agent_for(server, tmp_path, window=None)
        agent.hooks = hooks(tmp_path, PreCompact=str(gate), SessionStart=str(gate))
        for n in range(3):
            await turn(agent, words(300, n))
        (tmp_path / "block").touch()
        blocked = [e async for e in agent.compactor.manual("keep the numbers")]
        assert not any(isinstance(e, Compacted) for e in blocked)
        assert any(isinstance(e, Notice) and e.message == "not compacted: a PreCompact hook "
                   "blocked it: a checkpoint is being written" for e in blocked)
        (tmp_path / "block").unlink()
        done = [e async for e in agent.compactor.manual()]
        assert any(isinstance(e, Compacted) for e in done)
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(s["hook_event_name"], s.get("trigger") or s.get("source")) for s in seen] == [
        ("PreCompact", "manual"), ("PreCompact", "manual"), ("SessionStart", "compact")]
    assert seen[0]["custom_instructions"] == "keep the numbers"
