"""The built-in server in code mode: its tools are stubs like any server's, a script calls
them through the same policy and gate (``read`` runs unasked, ``edit`` is asked for with
its diff), and an edit made from a script is kept for ``/rewind`` like one made directly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.local_kit import local_server
from tests.test_agent import RecordingGate
from tests.test_codemode import coded, inner, result_of, script, turn
from tui_agent.builtin.checkpoints import Checkpoints, store_for
from tui_agent.config.builtin_server import READ_ONLY
from tui_agent.core.permissions import Decision, ServerRules

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_script_reads_and_edits_through_the_builtin_server(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("# Notes\ncolour = red\n")
    monkeypatch.chdir(project)
    local = local_server()
    code = ('text = local.read(path="notes.md")\n'
            'print("read", len(text.splitlines()), "lines")\n'
            'result = local.edit(path="notes.md", old_string="red", new_string="blue")')
    fake_llm.push(script(code), Reply(text="done"))
    gate = RecordingGate(Decision.approve())
    async with coded(fake_llm, tmp_path, {"local": local}, gate,
                     {"local": ServerRules(auto=READ_ONLY)}) as agent:
        events = await turn(agent)
    outcome = result_of(events)
    assert not outcome.is_error, outcome.text
    assert "logs:\nread 2 lines" in outcome.text and "tool calls made: 2" in outcome.text
    assert [(c.server, c.tool) for c in inner(events)] == [("local", "read"), ("local", "edit")]
    assert [(a.tool, a.arguments["new_string"]) for a in gate.asked] == [("edit", "blue")]
    assert gate.asked[0].parent == "s1" and "local.edit" in gate.asked[0].script
    assert (project / "notes.md").read_text() == "# Notes\ncolour = blue\n"
    kept = Checkpoints(store_for(project)).lines()
    assert [line.path for line in kept] == [str(project / "notes.md")]
