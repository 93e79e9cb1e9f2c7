"""The built-in file tools against the attacks and bad files the review of issue 48 names:
a project in the home folder (``~/.ssh``, ``~/.aws`` and tui-agent's own folders refused by
read, grep and glob, and skipped without a word when a folder is walked); a symlink planted
at a temporary name, or swapped in between a path's check and its open (the race is played
deterministically: the path is resolved, then swapped, then given to the tool's function);
grep's Python walk against a FIFO, a 5 GB sparse file and its deadline; a write that fails
leaving no checkpoint behind, and a checkpoint that cannot be kept said in the answer."""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import need
from tests.test_builtin_files import local_hub
from tests.test_hub import call
from tui_agent.builtin.checkpoints import Checkpoints
from tui_agent.builtin.files import ripgrep, walk
from tui_agent.builtin.files.edit import edit_file
from tui_agent.builtin.files.grep import search
from tui_agent.builtin.files.listing import list_folder
from tui_agent.builtin.files.read import read_file
from tui_agent.builtin.files.write import write_file
from tui_agent.builtin.secrets import secret_places
from tui_agent.builtin.workspace import Refused, Workspace

SECRETS = (".ssh/id_ed25519", ".aws/credentials", ".config/tui-agent/config.toml",
           "state/tui-agent/history.log")
"""Under a home that is the project; ``state`` is ``XDG_STATE_HOME`` (not hidden, so
ripgrep would search it)."""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project that is the home folder, a secret in each place, one file that may be
    read, and a symlink with an ordinary name leading to ``.ssh``."""
    root = tmp_path / "home-project"
    for name in SECRETS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"SECRET in {name}\n")
    (root / "notes.txt").write_text("no SECRET here\n")
    (root / "keys").symlink_to(root / ".ssh")
    monkeypatch.chdir(root)
    return root


def home_workspace(home: Path) -> Workspace:
    return Workspace(cwd=home, secrets=secret_places(
        {"HOME": str(home), "XDG_STATE_HOME": str(home / "state")}))


@pytest.mark.anyio
async def test_a_project_in_the_home_keeps_its_secrets(home: Path, tmp_path: Path) -> None:
    async with local_hub(home, tmp_path, HOME=str(home),
                         XDG_STATE_HOME=str(home / "state")) as (hub, _):
        for path in (*SECRETS, "~/.aws/credentials", "keys/id_ed25519", ".ssh"):
            text, is_error = await call(hub, "local__read", path=path)
            assert is_error and "which holds secrets: tui-agent's file tools do not read " \
                "or change it" in text and "SECRET" not in text, (path, text)
        text, is_error = await call(hub, "local__grep", pattern="SECRET", path=".aws")
        assert is_error and f"is in {home / '.aws'}, which holds secrets" in text, text
        assert await call(hub, "local__grep", pattern="SECRET") == (
            "notes.txt:1:no SECRET here", False)
        assert await call(hub, "local__glob", pattern="**/*") == ("notes.txt", False)
        for pattern in (".ssh/*", ".config/**/*", "state/**/*", "keys/*"):
            assert await call(hub, "local__glob", pattern=pattern) == (
                f"no files match {pattern} under .", False)
        text, _ = await call(hub, "local__list", path=".")
        assert text.splitlines() == [".: 4 entries", ".config/", f"keys/@ -> {home / '.ssh'}",
                                     "state/", "notes.txt  15 B"]
        assert await call(hub, "local__list", path="state") == ("state is empty", False)
        text, is_error = await call(hub, "local__write", path=".ssh/authorized_keys",
                                    content="ssh-ed25519 AAAA evil\n")
        assert is_error and "holds secrets" in text
        assert not (home / ".ssh" / "authorized_keys").exists()


def test_the_python_walk_skips_the_secret_places(home: Path) -> None:
    workspace = home_workspace(home)
    assert search(workspace, "SECRET", home, None, use_rg=False) == \
        "notes.txt:1:no SECRET here"
    assert search(workspace, "SECRET", home, "**", use_rg=False) == \
        "notes.txt:1:no SECRET here"
    with pytest.raises(Refused, match="holds secrets"):
        workspace.resolve("state/tui-agent")


def test_ripgrep_skips_the_secret_places(home: Path) -> None:
    need(shutil.which("rg") is not None, "ripgrep (rg)")
    assert search(home_workspace(home), "SECRET", home, None, use_rg=True) == \
        "notes.txt:1:no SECRET here"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "d").mkdir(parents=True)
    (root / "d" / "id").write_text("inside\n")
    (root / "README.md").write_text("# Demo\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id").write_text("SECRET outside\n")
    (outside / "bashrc").write_text("# the user's bashrc\n")
    monkeypatch.chdir(root)
    return root


def test_a_symlink_planted_at_the_temporary_name_is_not_followed(project: Path) -> None:
    """The old temporary name (``.NAME.tui-agent-PID.tmp``) planted as a symlink out: the
    approved content goes to the file, nothing outside changes, no symlink is left."""
    workspace = Workspace(cwd=project)
    bashrc = project.parent / "outside" / "bashrc"
    for name in ("README.md", "new.md"):
        (project / f".{name}.tui-agent-{os.getpid()}.tmp").symlink_to(bashrc)
        write_file(workspace, workspace.resolve(name), "approved\n")
        assert not (project / name).is_symlink() and \
            (project / name).read_text() == "approved\n"
    edit_file(workspace, workspace.resolve("README.md"), "approved", "edited")
    assert (project / "README.md").read_text() == "edited\n"
    assert bashrc.read_text() == "# the user's bashrc\n"


def swap(folder: Path, to: Path) -> None:
    """A background command's move: ``folder`` becomes a symlink to ``to``."""
    folder.rename(folder.with_name(folder.name + ".was"))
    folder.symlink_to(to)


def test_a_folder_swapped_for_a_symlink_after_the_check_is_caught(project: Path) -> None:
    workspace = Workspace(cwd=project)
    outside = project.parent / "outside"
    changed = rf"d/id changed while it was opened \(it now leads to {outside / 'id'}"
    tools: list[tuple[str, Callable[[Path], object], str]] = [
        ("read", lambda p: read_file(workspace, p), changed),
        ("edit", lambda p: edit_file(workspace, p, "SECRET", "changed"), changed),
        ("write", lambda p: write_file(workspace, p, "changed\n"),
         "d became a symlink after it was checked")]
    for name, tool, said in tools:
        resolved = workspace.resolve("d/id")
        swap(project / "d", outside)
        with pytest.raises(Refused, match=said):
            tool(resolved)
        (project / "d").unlink()
        (project / "d.was").rename(project / "d")
        assert (outside / "id").read_text() == "SECRET outside\n", name
    (project / "d" / "e").mkdir()
    resolved = workspace.resolve("d/e/new.txt")
    (outside / "e").mkdir()
    swap(project / "d", outside)
    with pytest.raises(Refused, match=f"d/e changed while it was opened .it now leads to "
                                      f"{outside / 'e'}"):
        write_file(workspace, resolved, "changed\n")
    assert not (outside / "e" / "new.txt").exists()
    (project / "d").unlink()
    (project / "d.was").rename(project / "d")
    resolved = workspace.resolve("d")
    swap(project / "d", outside)
    with pytest.raises(Refused, match="became a symlink after it was checked"):
        list_folder(workspace, resolved)


def test_a_file_swapped_for_a_symlink_after_the_check_is_caught(project: Path) -> None:
    workspace = Workspace(cwd=project)
    resolved = workspace.resolve("d/id")
    (project / "d" / "id").unlink()
    (project / "d" / "id").symlink_to(project.parent / "outside" / "id")
    tools: list[Callable[[], object]] = [
        lambda: read_file(workspace, resolved),
        lambda: edit_file(workspace, resolved, "SECRET", "changed")]
    for tool in tools:
        with pytest.raises(Refused, match="d/id became a symlink after it was checked"):
            tool()
    assert (project.parent / "outside" / "id").read_text() == "SECRET outside\n"


def bounded(work: concurrent.futures.Future[str], fifo: Path) -> str:
    """The answer within 30 s; else the FIFO's waiting reader is let go (so the thread
    ends) and the test fails."""
    try:
        return work.result(timeout=30)
    except concurrent.futures.TimeoutError:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        raise AssertionError("grep waited on the FIFO") from None


def test_the_python_walk_never_waits_on_a_fifo(project: Path) -> None:
    os.mkfifo(project / "d" / "pipe")
    (project / "d" / "z.txt").write_text("needle\n")
    workspace = Workspace(cwd=project)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        for where in (project, project / "d" / "pipe"):
            answer = bounded(pool.submit(
                search, workspace, "needle", where, None, use_rg=False), project / "d" / "pipe")
            assert answer == ("d/z.txt:1:needle" if where == project
                              else "no matches for needle")


def test_the_python_walk_searches_the_head_of_a_huge_file(project: Path) -> None:
    with open(project / "huge.log", "wb") as f:  # 5 GB, sparse: nothing more is written
        f.write(b"a needle at the top\n" + b"then text, no NUL in the first 8 KB\n" * 500)
        f.truncate(5 * 1024 ** 3)
    started = time.monotonic()
    answer = search(Workspace(cwd=project), "needle", project, None, use_rg=False)
    assert answer.splitlines()[-1] == "(only the first 16.0 MB of huge.log searched)"
    assert answer == ("huge.log:1:a needle at the top\n"
                      "(only the first 16.0 MB of huge.log searched)")
    assert time.monotonic() - started < 20


def test_grep_stops_at_its_deadline_and_its_line_cap(project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Both engines answer what they found by the deadline (here 0 s), with a note; and a
    search with more lines than one answer shows stops, saying so."""
    (project / "many.txt").write_text("needle\n" * 2000)
    engines = [False] + ([True] if shutil.which("rg") else [])
    for use_rg in engines:
        answer = search(Workspace(cwd=project), "needle", project, None, use_rg=use_rg)
        lines = answer.splitlines()
        assert len(lines) == 501 and lines[-1] == (
            "(cut at 500 lines: more lines match; narrow the pattern, path or glob)"), use_rg
    monkeypatch.setattr(walk, "TIMEOUT", 0.0)
    monkeypatch.setattr(ripgrep, "TIMEOUT", 0.0)
    for use_rg in engines:
        answer = search(Workspace(cwd=project), "needle", project, None, use_rg=use_rg)
        assert answer.splitlines()[-1] == (
            "(the search stopped after 0 s: these are the lines found by then; narrow path "
            "or glob)"), (use_rg, answer[-300:])


def test_a_rename_that_fails_withdraws_its_checkpoint(project: Path, tmp_path: Path) -> None:
    """The content is on disk and the checkpoint journaled, then the rename fails (the
    name became a folder in between): the line goes, so a later /rewind does not remove
    what is there."""
    store = Checkpoints(tmp_path / "store")

    def keep_then_block(path: Path) -> str:
        said = store.keep(path)
        (path / "inside").mkdir(parents=True)  # os.replace onto a folder that is not empty
        return said

    workspace = Workspace(cwd=project, before_write=keep_then_block,
                          not_written=store.withdraw)
    there = sorted(p.name for p in project.iterdir())
    with pytest.raises(Refused, match="notes.txt cannot be written"):
        write_file(workspace, workspace.resolve("notes.txt"), "x")
    assert store.lines() == []
    assert sorted(p.name for p in project.iterdir()) == sorted([*there, "notes.txt"])


def test_a_write_that_fails_leaves_no_checkpoint(project: Path, tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store")
    workspace = Workspace(cwd=project, before_write=store.keep)
    with pytest.raises(Refused, match="README.md cannot be opened: Not a directory"):
        write_file(workspace, workspace.resolve("README.md/notes.txt"), "x")
    assert store.lines() == []
    write_file(workspace, workspace.resolve("notes.txt"), "x")
    assert [line.path for line in store.lines()] == [str(project / "notes.txt")]


@pytest.mark.anyio
async def test_a_checkpoint_that_cannot_be_kept_is_said(project: Path,
                                                        tmp_path: Path) -> None:
    data = Path(os.environ["XDG_DATA_HOME"]) / "tui-agent"
    data.mkdir(parents=True, exist_ok=True)
    (data / "checkpoints").write_text("a file where the store's folder should be\n")
    async with local_hub(project, tmp_path) as (hub, _):
        text, is_error = await call(hub, "local__write", path="notes.txt", content="x\n")
        assert not is_error and text.startswith("created notes.txt (1 lines)\n(no "
                                                f"checkpoint of {project / 'notes.txt'}: ")
        assert text.endswith("; /rewind cannot restore this change)"), text
        text, _ = await call(hub, "local__edit", path="README.md", old_string="Demo",
                             new_string="Show")
        assert text.startswith("edited README.md: 1 replacement at line 1\n(no checkpoint")
    assert (project / "notes.txt").read_text() == "x\n"
