"""The built-in server's file tools (``tui-agent tools serve``, the server ``local``),
started over stdio through the real hub as the app starts it: what each tool answers, and
every escape and bad file the issue names refused with a message that names it (``..``,
absolute paths and symlinks out of the roots, a FIFO, ``/dev/zero``, a 5 GB file, binary
files, a non-unique ``edit``), nothing waiting on any of them. Then the roots growing
(``/add-dir``) and grep's two engines answering alike."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.conftest import need, tagged_env
from tests.test_hub import call
from tui_agent.builtin.files.grep import search
from tui_agent.builtin.workspace import Workspace
from tui_agent.config.builtin_server import builtin_server
from tui_agent.tools.client import ClientSide
from tui_agent.tools.frontdesk import FrontDesk
from tui_agent.tools.hub import Hub

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n\n\ndef other():\n"
                                         "    return 42\n", encoding="utf-8")
    (root / "README.md").write_text("# Demo\n\nSay hello.\n", encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.py").write_text("return 42\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


@asynccontextmanager
async def local_hub(project: Path, tmp_path: Path, *args: str, **env: str
                    ) -> AsyncIterator[tuple[Hub, FrontDesk]]:
    """The built-in server as configured by default (tagged, so a test sees it ended, with
    ``env`` added to its environment), offered ``project`` as its root by the client."""
    config = builtin_server().model_copy(update={
        "env": tagged_env(**env), "startup_timeout": 30,
        "args": [*builtin_server().args, *args]})
    desk = FrontDesk(project=project)
    async with Hub({"local": config}, log_dir=tmp_path / "logs", default_timeout=20,
                   client_side=lambda n, c: desk.side(n, c, ClientSide())) as hub:
        await hub.wait_all()
        status = hub.statuses()[0]
        assert status.state == "connected", status.last_error
        yield hub, desk


async def test_each_file_tool_through_the_hub(project: Path, tmp_path: Path) -> None:
    async with local_hub(project, tmp_path) as (hub, _):
        specs = {s.name: s for s in hub.specs()}
        assert set(specs) == {f"local__{t}" for t in
                              ("read", "list", "glob", "grep", "edit", "write", "shell",
                               "shell_output", "shell_kill")}
        assert set(specs["local__grep"].parameters["properties"]) == {
            "pattern", "path", "glob", "context"}
        assert await call(hub, "local__read", path="src/app.py", offset=2, limit=1) == (
            "     2\t    return 42\n(more lines follow: offset=3 reads on)", False)
        text, _ = await call(hub, "local__list", path=".")
        assert text.splitlines()[1:] == [".hidden/", "src/", "README.md  19 B"]
        assert await call(hub, "local__glob", pattern="**/*.py") == ("src/app.py", False)
        assert await call(hub, "local__grep", pattern=r"return \d+", context=1) == (
            "src/app.py-1-def main():\nsrc/app.py:2:    return 42\nsrc/app.py-3-\n--\n"
            "src/app.py-5-def other():\nsrc/app.py:6:    return 42", False)
        assert await call(hub, "local__edit", path="src/app.py", old_string="return 42",
                          new_string="return 43", replace_all=True) == (
            "edited src/app.py: 2 replacements", False)
        assert await call(hub, "local__write", path=str(project / "docs" / "new.md"),
                          content="one\ntwo\n") == ("created docs/new.md (2 lines)", False)
        assert (project / "docs" / "new.md").read_text() == "one\ntwo\n"
        assert (project / "src" / "app.py").read_text().count("return 43") == 2


async def test_escapes_and_bad_files_are_refused_by_name(project: Path,
                                                         tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE\n")
    (project / "link").symlink_to(outside / "id_rsa")
    (project / "zero").symlink_to("/dev/zero")
    os.mkfifo(project / "pipe")
    with open(project / "huge.log", "wb") as f:  # 5 GB, sparse: nothing is written
        f.truncate(5 * 1024 ** 3)
    (project / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    roots = str(project)
    async with local_hub(project, tmp_path) as (hub, _):
        started = time.monotonic()
        for path, said in (
                ("../outside/id_rsa", f"../outside/id_rsa is outside the folders this server "
                                      f"may touch: {roots}. Ask the user to add its folder"),
                (str(outside / "id_rsa"), "is outside the folders this server may touch"),
                ("link", f"link is outside the folders this server may touch (it leads to "
                         f"{outside / 'id_rsa'}): {roots}"),
                ("zero", "(it leads to /dev/zero)"),
                ("pipe", "pipe is a FIFO (named pipe), not a regular file: it is not read"),
                ("src", "src is a folder, not a regular file")):
            text, is_error = await call(hub, "local__read", path=path)
            assert is_error and said in text, (path, text)
        assert await call(hub, "local__read", path="huge.log") == (
            "huge.log is a binary file (5.0 GB): not shown. Read text files only.", False)
        text, _ = await call(hub, "local__read", path="blob.bin")
        assert text.startswith("blob.bin is a binary file (700 B)")
        text, is_error = await call(hub, "local__edit", path="src/app.py",
                                    old_string="return 42", new_string="return 1")
        assert is_error and "old_string occurs 2 times in src/app.py" in text, text
        assert "return 1" not in (project / "src" / "app.py").read_text()
        text, is_error = await call(hub, "local__write", path="../outside/new", content="x")
        assert is_error and "outside the folders" in text and not (outside / "new").exists()
        text, is_error = await call(hub, "local__edit", path="huge.log", old_string="a",
                                    new_string="b")
        assert is_error and "huge.log is 5.0 GB: files over 10.0 MB are not edited" in text
        text, is_error = await call(hub, "local__grep", pattern="(unclosed")
        assert is_error and "(unclosed" in text, text
        assert time.monotonic() - started < 30  # nothing waited on the FIFO or the 5 GB


async def test_a_device_inside_a_root_is_refused(project: Path, tmp_path: Path) -> None:
    """``--root /dev`` (standalone use) puts ``/dev/zero`` in reach: still not read."""
    async with local_hub(project, tmp_path, "--root", "/dev") as (hub, _):
        text, is_error = await call(hub, "local__read", path="/dev/zero")
        assert is_error and "/dev/zero is a character device, not a regular file" in text


async def test_an_added_folder_becomes_reachable(project: Path, tmp_path: Path) -> None:
    """``/add-dir`` and ``--add-dir`` grow the client's roots and tell the server, which
    asks for them again."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("water the plants\n")
    async with local_hub(project, tmp_path) as (hub, desk):
        text, is_error = await call(hub, "local__read", path=str(notes / "todo.txt"))
        assert is_error and "outside the folders" in text
        desk.shared_roots = [str(notes)]
        await hub.roots_changed()
        deadline = time.monotonic() + 30
        while is_error and time.monotonic() < deadline:
            text, is_error = await call(hub, "local__read", path=str(notes / "todo.txt"))
            await asyncio.sleep(0.05)
        assert (text, is_error) == ("     1\twater the plants", False)


def test_ripgrep_and_the_python_walk_answer_alike(project: Path) -> None:
    need(shutil.which("rg") is not None, "ripgrep (rg)")
    (project / "src" / "util.py").write_text("x = 1\n# TODO: tidy\ny = 2\n")
    (project / "notes.txt").write_text("TODO: more\n")
    (project / "bin.dat").write_bytes(b"TODO\x00\x01")
    workspace = Workspace(cwd=project)
    for glob, context in ((None, 0), ("*.py", 1), ("src/**", 0)):
        fast = search(workspace, "TODO|return", project, glob, context, use_rg=True)
        slow = search(workspace, "TODO|return", project, glob, context, use_rg=False)
        assert fast == slow, (glob, fast, slow)
    assert "bin.dat" not in fast and ".hidden" not in fast
    assert search(workspace, "TODO", project, "*.py", 1, use_rg=False) == (
        "src/util.py-1-x = 1\nsrc/util.py:2:# TODO: tidy\nsrc/util.py-3-y = 2")


def test_the_write_hook_runs_before_each_change(project: Path) -> None:
    """The seam the checkpoint part fills: called with the path before it changes."""
    from tui_agent.builtin.files.edit import edit_file
    from tui_agent.builtin.files.write import write_file

    seen: list[tuple[Path, str | None]] = []

    def keep(p: Path) -> str:
        seen.append((p, p.read_text() if p.exists() else None))
        return ""

    workspace = Workspace(cwd=project, before_write=keep)
    app = project / "src" / "app.py"
    before = app.read_text()
    edit_file(workspace, app, "def main", "def start")
    write_file(workspace, project / "new.txt", "hi")
    assert seen == [(app, before), (project / "new.txt", None)]
