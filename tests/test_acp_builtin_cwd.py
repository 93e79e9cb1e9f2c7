"""Over ACP each session's built-in server ``local`` works in the session's own folder,
not in the folder the editor started ``tui-agent acp`` in: a real ACP client, a real
``tui-agent acp`` started in a third folder, two sessions in two folders. A relative
``local__read`` resolves in each session's folder, a write in one session is kept in
that folder's checkpoint store only, and the shell's sandbox leaves the ACP process's
folder read-only."""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, prompt, running
from tests.conftest import host_visible
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.local_kit import local_table
from tests.shell_kit import need_bwrap
from tui_agent.builtin.checkpoints import Checkpoints, store_for

pytestmark = pytest.mark.slow


def calls(session: str, *made: tuple[str, dict[str, object]]) -> Reply:
    return Reply(tool_calls=[FakeToolCall(f"local__{tool}", args, id=f"{session}{i}-{tool}")
                             for i, (tool, args) in enumerate(made)])


def test_each_session_has_its_own_builtin_server_in_its_folder(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_bwrap()
    monkeypatch.delenv("TUI_AGENT_NO_BUILTIN")
    # Where the editor starts the process: not under /tmp (bwrap gives commands a /tmp of
    # their own, where a write would vanish whether or not the folder were writable).
    started_in = host_visible() / f".acp-started-{uuid.uuid4().hex[:8]}"
    started_in.mkdir()
    folders = {name: tmp_path / name for name in ("a", "b")}
    for name, folder in [*folders.items(), ("editor", started_in)]:
        folder.mkdir(exist_ok=True)
        (folder / "which.txt").write_text(f"folder {name}\n")
    escaped = started_in / "escaped.txt"
    fake_llm.push(
        calls("a", ("read", {"path": "which.txt"}), ("write", {"path": "made.txt",
                                                           "content": "from a\n"}),
              ("shell", {"command": f"echo out > {escaped}"})),
        Reply(text="a done"),
        calls("b", ("read", {"path": "which.txt"})),
        Reply(text="b done"))
    editor = Editor(answers=["allow_once", "allow_once"])
    local = local_table()

    async def scenario() -> None:
        async with running(editor, config(tmp_path, fake_llm, local),
                           cwd=started_in) as (conn, _):
            ids = {name: (await conn.new_session(cwd=str(folder), mcp_servers=[])).session_id
                   for name, folder in folders.items()}
            assert await prompt(conn, ids["a"], "read, write, escape") == "end_turn"
            assert await prompt(conn, ids["b"], "read") == "end_turn"

    try:
        asyncio.run(scenario())
        results = {u.tool_call_id: u for u in editor.of("tool_call_update")
                   if u.status in ("completed", "failed")}
        said = {k: json.dumps(u.model_dump(mode="json")) for k, u in results.items()}
        assert "folder a" in said["a0-read"] and "folder b" in said["b0-read"], said
        assert (folders["a"] / "made.txt").read_text() == "from a\n"
        assert not escaped.exists(), "the shell wrote in the ACP process's folder"
        assert "Read-only file system" in said["a2-shell"], said["a2-shell"]
        kept_a = [line.path for line in Checkpoints(store_for(folders["a"])).lines()]
        kept_b = [line.path for line in Checkpoints(store_for(folders["b"])).lines()]
        kept_started = [line.path for line in Checkpoints(store_for(started_in)).lines()]
        assert str(folders["a"] / "made.txt") in kept_a, kept_a
        assert not any("made.txt" in p for p in [*kept_b, *kept_started]), (kept_b,
                                                                           kept_started)
    finally:
        shutil.rmtree(started_in, ignore_errors=True)
