"""Code mode's ``s`` in the app, against server-filesystem: approving a script on its
read-only call approves its later reads, never its write, which still asks with its
diff; the question says which named tools ``s`` covers and which still ask."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.conftest import TAG_VAR
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import filesystem
from tests.ui.kit import SIZE, finish, make_app, ready, send, shown, until, write_config
from tui_agent.core.scripts import WRITES_FILES
from tui_agent.ui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def read_then_write(project: Path) -> str:
    """A script that reads a file twice, then writes another with what it read."""
    source = json.dumps(str(project / "in.txt"))
    return (f"a = fs.read_text_file(path={source})\n"
            f"b = fs.read_text_file(path={source})\n"
            f"fs.write_file(path={json.dumps(str(project / 'out.txt'))}, "
            'content=a["content"] + b["content"])\n'
            'result = "written"')


def project_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project, the working directory: the root server-filesystem is given."""
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    (project / "in.txt").write_text("hello\n", encoding="utf-8")
    (project / "out.txt").write_text("old\n", encoding="utf-8")
    return project


def filesystem_server(project: Path) -> str:
    return (f"\n[servers.fs]\ncommand = {json.dumps(filesystem())}\n"
            f"args = [{json.dumps(str(project))}]\n"
            f"env = {{ {TAG_VAR} = {json.dumps(os.environ[TAG_VAR])} }}\n"
            "startup_timeout = 30\n")


def labels(screen: ApprovalScreen) -> str:
    return "\n".join(str(label.render()) for label in screen.query(".label")
                     if isinstance(label, Static))


async def test_s_on_a_read_leaves_the_scripts_write_asking_with_its_diff(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = project_files(tmp_path, monkeypatch)
    fake_llm.push(Reply(tool_calls=[FakeToolCall(
        "executeToolCode", {"code": read_then_write(project)}, id="s1")]),
        Reply(text="copied"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          extra="[code_mode]\nenabled = true\n" + filesystem_server(project))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "copy in.txt to out.txt, twice")
        first = await shown(pilot, app, ApprovalScreen, "the read", 30)
        assert first.call.tool == "read_text_file"
        await until(pilot, lambda: "still asks" in labels(first), what="the scope line")
        said = labels(first)  # read now: the labels go with the modal
        assert "approve the listed tools" in str(first.query_one(".keys").render())
        await pilot.press("s")
        # Mounted, not only pushed: a busy round queried its key row before it composed.
        second = await shown(pilot, app, ApprovalScreen, "the write's own question", 30,
                             replacing=first)
        assert second.call.tool == "write_file"  # the second read did not ask
        # It names nothing left to approve ahead: s is not offered (it would approve once).
        assert "approve the listed tools" not in str(second.query_one(".keys").render())
        assert "each call of this script asks" in labels(second)
        assert second.call.change is not None
        diff = str(second.query_one(".diff").render())
        assert "-old" in diff and "+hello" in diff
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended == 1, 30, "the turn to end")
        assert (project / "out.txt").read_text(encoding="utf-8") == "hello\nhello\n"
        # What the first question said s would and would not cover.
        assert first.call.script_tools == ("fs.read_text_file",)
        assert first.call.script_held == (("fs.write_file", WRITES_FILES),)
        assert "s approves this call and, for the rest of this run, the script's calls " \
               "of: fs.read_text_file" in said
        assert f"still asks at each call: fs.write_file ({WRITES_FILES})" in said
        await finish(app)
