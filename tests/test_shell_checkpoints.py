"""What a ``shell`` command changes in the project is kept in the checkpoint store, as an
``edit`` is: through the real hub, a real stdio server and real bubblewrap, the files a
command overwrote, removed or created come back with the store's ``restore``; what it
could not keep is named in the command's result."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from tests.conftest import tagged_env
from tests.shell_kit import call, need_bwrap, shell_hub, shell_server
from tui_agent.builtin.checkpoints import Checkpoints, store_for
from tui_agent.builtin.checkpoints.shell_watch import ShellWatch
from tui_agent.config.builtin_server import builtin_server
from tui_agent.tools.hub import Hub

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "f").write_text("before f\n")
    (project / "g").write_text("before g\n")
    (project / "sub" / "h").write_text("untouched\n")
    return project


async def test_a_bwrap_commands_changes_are_restored_by_the_store(
        tmp_path: Path, project: Path) -> None:
    need_bwrap()
    store = tmp_path / "store"
    (project / "big.bin").write_bytes(b"B" * 5000)
    server = shell_server(project, tmp_path / "home", keep=["--keep", str(store),
                                                            "--keep-most-file", "4096"],
                          sandbox="bwrap")
    with anyio.fail_after(120):
        async with shell_hub(server, tmp_path) as hub:
            text, error = await call(hub, "shell", command="echo x > f && rm g && "
                                     "mkdir -p new && echo n > new/file")
            assert not error, text
            assert "not kept" not in text, text
            text, error = await call(hub, "shell", command="echo y > big.bin")
            assert not error, text
    assert (project / "f").read_text() == "x\n"
    assert not (project / "g").exists()
    assert f"[not kept for /rewind: {project / 'big.bin'} (larger than 4 KiB)]" in text
    done = Checkpoints(store).restore(0, [str(project)])
    assert (project / "f").read_text() == "before f\n"
    assert (project / "g").read_text() == "before g\n"
    assert not (project / "new" / "file").exists()
    assert (project / "sub" / "h").read_text() == "untouched\n"
    assert sorted(done.restored) == [str(project / "f"), str(project / "g")]
    assert done.removed == [str(project / "new" / "file")]
    assert done.failed == [(str(project / "big.bin"), "not kept (larger than 4 KiB)")]


async def test_a_background_commands_changes_are_kept_when_it_ends(
        tmp_path: Path, project: Path) -> None:
    store = tmp_path / "store"
    server = shell_server(project, tmp_path / "home", keep=["--keep", str(store)],
                          sandbox="none")
    with anyio.fail_after(120):
        async with shell_hub(server, tmp_path) as hub:
            text, error = await call(hub, "shell", command="echo z > f", background=True)
            assert not error, text
            with anyio.fail_after(30):
                while not Checkpoints(store).lines():
                    await anyio.sleep(0.05)
    assert (project / "f").read_text() == "z\n"
    Checkpoints(store).restore(0, [str(project)])
    assert (project / "f").read_text() == "before f\n"


def test_a_file_is_read_once_until_it_changes_and_bounds_are_said(
        tmp_path: Path, project: Path) -> None:
    """The copies are a cache: an unchanged file is not read again; past the watched
    count the result says the rest is not watched, and nothing changed is journaled."""
    watch = ShellWatch(Checkpoints(tmp_path / "store"))
    first = watch.before([project])
    assert watch.after(first) == [] and watch.store.lines() == []
    digest = first.files[str(project / "f")][1] or ""
    del watch.held[digest]  # a second look that read f again would hold its copy again
    again = watch.before([project])
    assert again.files == first.files and again.reasons == {}
    assert digest not in watch.held
    small = ShellWatch(Checkpoints(tmp_path / "store2"), most_files=2)
    found = small.before([project])
    (project / "sub" / "h").write_text("changed\n")
    (project / "f").write_text("changed\n")
    (project / "g").write_text("changed\n")
    notes = small.after(found)
    assert notes[-1] == "files past the first 2 in the project are not watched"
    assert len(small.store.lines()) == 2


def test_only_the_copies_of_changed_files_are_written_to_the_store(
        tmp_path: Path, project: Path) -> None:
    """The look before a command holds the copies in memory: the store gets the copy of
    each file the command changed, after it, and nothing for the others (a blob written
    per file of the project made the first command in a big project take seconds); a
    copy no file has any more is let go at the next look."""
    watch = ShellWatch(Checkpoints(tmp_path / "store"))
    found = watch.before([project])
    blobs = tmp_path / "store" / "blobs"
    assert not blobs.exists() or not any(blobs.rglob("*"))
    assert sorted(watch.held.values()) == [b"before f\n", b"before g\n", b"untouched\n"]
    (project / "f").write_text("changed\n")
    assert watch.after(found) == []
    assert [p.read_text() for p in blobs.rglob("*") if p.is_file()] == ["before f\n"]
    (project / "g").unlink()
    watch.before([project])
    assert sorted(watch.held.values()) == [b"changed\n", b"untouched\n"]
    done = Checkpoints(tmp_path / "store").restore(0, [str(project)])
    assert done.restored == [str(project / "f")]
    assert (project / "f").read_text() == "before f\n"


async def test_the_real_server_keeps_a_commands_changes_in_its_folders_store(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tui-agent tools serve`` as the app starts it, in the project: a command's change
    lands in the store ``edit`` keeps in (the folder's), which ``/rewind`` reads."""
    need_bwrap()
    monkeypatch.chdir(project)
    config = builtin_server().model_copy(update={
        "env": tagged_env(XDG_DATA_HOME=os.environ["XDG_DATA_HOME"]), "startup_timeout": 30})
    with anyio.fail_after(120):
        async with Hub({"local": config}, log_dir=tmp_path / "logs",
                       default_timeout=20) as hub:
            await hub.wait_all()
            text, error = await call(hub, "shell", command="echo x > f && rm g")
            assert not error, text
    assert (project / "f").read_text() == "x\n" and not (project / "g").exists()
    done = Checkpoints(store_for(project)).restore(0, [str(project)])
    assert sorted(done.restored) == [str(project / "f"), str(project / "g")]
    assert (project / "f").read_text() == "before f\n"
    assert (project / "g").read_text() == "before g\n"
