"""``/rewind``'s restore made safe and exact (the review of i48: S4, C2, C3, C10, C11, X5):
a file is put back only inside the conversation's folders and never through a symbolic
link; only the conversation's own changes (and its branch ancestors' before the branch
point) are taken, matched by the message count each change was tagged with, never by a
clock; a write that failed withdraws its line; a background command's end leaves out the
files a tool journaled while it ran. The real store on the real file system."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_agent.builtin.checkpoints import Checkpoints, store_for
from tui_agent.builtin.checkpoints.caller import CALLER, Caller
from tui_agent.builtin.checkpoints.shell_watch import ShellWatch
from tui_agent.config import paths
from tui_agent.core.rewind import plan, restore
from tui_agent.core.session import SessionWriter, load
from tui_agent.core.session.branch import branch, user_points
from tui_agent.core.session.store import SessionStore


def keep_as(store: Checkpoints, path: Path, session: str, turn: int) -> None:
    told = CALLER.set(Caller(session, turn))
    try:
        assert store.keep(path) == ""
    finally:
        CALLER.reset(told)


def test_a_restore_never_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    """S4: the model wrote notes.txt, a command swapped it for a link to a file outside
    the project; the restore leaves the outside file alone and says why."""
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    outside.mkdir()
    bashrc, notes = outside / ".bashrc", project / "notes.txt"
    bashrc.write_text("the user's own\n")
    store = Checkpoints(tmp_path / "store")
    notes.write_text("turn 1\n")
    store.keep(notes)
    notes.write_text("turn 2\n")
    notes.unlink()
    notes.symlink_to(bashrc)
    (outside / "victim").write_text("keep me\n")
    (project / "gone").symlink_to(outside, target_is_directory=True)
    store.journal.write_text(store.journal.read_text() + (
        '{"seq":1,"at":0,"path":"%s","blob":null,"absent":true}\n' % (project / "gone" / "victim")))

    done = store.restore(0, [str(project)])

    assert bashrc.read_text() == "the user's own\n"
    assert (outside / "victim").read_text() == "keep me\n"
    assert notes.is_symlink()
    assert done.restored == [] and done.removed == []
    assert dict(done.failed) == {
        str(notes): "a symbolic link is now on its way (it would lead out of place)",
        str(project / "gone" / "victim"):
            "a symbolic link is now on its way (it would lead out of place)"}


def test_a_restore_outside_the_folders_is_refused(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store")
    (tmp_path / "a").mkdir()
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("before\n")
    store.keep(elsewhere)
    elsewhere.write_text("after\n")
    done = store.restore(0, [str(tmp_path / "a")])
    assert elsewhere.read_text() == "after\n"
    assert done.failed == [(str(elsewhere),
                            f"outside this conversation's folders ({tmp_path / 'a'})")]


def test_a_restore_replaces_the_file_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho one\n")
    script.chmod(0o751)
    store.keep(script)
    script.write_text("#!/bin/sh\necho two\n")
    inode = script.stat().st_ino
    done = store.restore(0, [str(tmp_path)])
    assert done.restored == [str(script)]
    assert script.read_text() == "#!/bin/sh\necho one\n"
    assert script.stat().st_mode & 0o777 == 0o751
    assert script.stat().st_ino != inode  # a new file renamed over, not written through
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def conversation(folder: Path, name: str) -> SessionWriter:
    writer = SessionWriter.create(paths.sessions_dir() / f"{name}.jsonl",
                                  {"model": "openai/x", "cwd": str(folder)})
    return writer


def test_only_the_conversations_own_changes_come_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """C2 and X5: two conversations in one folder share its store; rewinding one restores
    its own changes since the message (by the count each change was tagged with) and
    leaves the other's, with no clock involved (the times are all the same)."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    store = Checkpoints(store_for(project))
    mine, theirs = project / "mine.txt", project / "theirs.txt"
    mine.write_text("0\n")
    theirs.write_text("0\n")
    a = conversation(project, "20240301-093000-aaaaaa")
    a.message({"role": "user", "content": "one"}, at=100.0)
    keep_as(store, mine, a.id, 1)
    mine.write_text("1\n")
    a.message({"role": "assistant", "content": "done"}, at=100.0)
    a.message({"role": "user", "content": "two"}, at=100.0)
    keep_as(store, mine, a.id, 3)
    mine.write_text("2\n")
    keep_as(store, theirs, "20240301-093000-bbbbbb", 1)  # the other window, meanwhile
    theirs.write_text("theirs\n")
    a.message({"role": "assistant", "content": "done"}, at=100.0)
    a.close()
    conv = load(a.path)

    found = plan(conv, user_points(conv)[1])

    assert found.restorable == [str(mine)] and found.note == ""
    done = restore(found, [str(project)])
    assert mine.read_text() == "1\n" and theirs.read_text() == "theirs\n"
    assert done.restored == [str(mine)]


def test_a_branch_takes_its_ancestors_changes_before_its_branch_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch made by /rewind keeps its parent's lines from before the branch point
    (not those after it), and finds a store the parent noted in another folder."""
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    monkeypatch.chdir(project)
    here, there = Checkpoints(store_for(project)), Checkpoints(store_for(other))
    f = other / "f.txt"
    f.write_text("0\n")
    a = conversation(project, "20240301-093000-aaaaaa")
    a.message({"role": "user", "content": "one"})
    a.message({"role": "assistant", "content": "ok"})
    a.message({"role": "user", "content": "two"})
    keep_as(there, f, a.id, 3)  # the parent's change, in another folder's store
    f.write_text("1\n")
    a.message({"role": "assistant", "content": "ok"})
    a.message({"role": "user", "content": "three"})
    keep_as(there, f, a.id, 5)  # after the branch point: not the branch's
    f.write_text("2\n")
    a.close()
    child = branch(load(a.path), 4, SessionStore(paths.sessions_dir()))
    assert child.meta["lineage"] == [{"id": a.id, "before": 4}]
    keep_as(here, project / "g.txt", child.id, 4)
    (project / "g.txt").write_text("g\n")

    found = plan(child, user_points(child)[1])  # before "two"

    assert sorted(found.restorable) == [str(f), str(project / "g.txt")]
    picked = {line.turn for _, lines in found.changes for line in lines}
    assert picked == {3, 4}
    restore(found, [str(project), str(other)])
    assert f.read_text() == "0\n" and not (project / "g.txt").exists()


def test_an_untagged_journal_is_restored_by_time_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    store = Checkpoints(store_for(project))
    a = conversation(project, "20240301-093000-aaaaaa")
    a.message({"role": "user", "content": "one"}, at=1.0)
    a.close()
    (project / "f").write_text("old\n")
    store.keep(project / "f")  # no caller: an older server's line
    (project / "f").write_text("new\n")
    found = plan(load(a.path), user_points(load(a.path))[0])
    assert found.restorable == [str(project / "f")]
    assert "before checkpoints named their conversation" in found.note
    done = restore(found, [str(project)])
    assert (project / "f").read_text() == "old\n"
    assert "taken by the time of the message" in done.note


def test_a_failed_write_withdraws_its_line(tmp_path: Path) -> None:
    """C11: keep, then the write fails: the line goes, and a later restore does not
    remove the file the user created there since."""
    store = Checkpoints(tmp_path / "store")
    target = tmp_path / "new.txt"
    store.keep(target)  # absent
    assert store.withdraw(target) is True
    target.write_text("the user's\n")
    store.restore(0, [str(tmp_path)])
    assert target.read_text() == "the user's\n"
    assert store.withdraw(target) is False


def test_a_background_job_leaves_out_what_a_tool_journaled_while_it_ran(
        tmp_path: Path) -> None:
    """C3: a job started, then ``edit`` changed F (journaled), then the job ended: F is
    not journaled again against the job's older look (which would bring back the wrong
    version), and the watch reads F again at its next look."""
    store = Checkpoints(tmp_path / "store")
    watch = ShellWatch(store)
    project = tmp_path / "p"
    project.mkdir()
    f, made = project / "F", project / "made"
    f.write_text("A\n")
    started = watch.before([project])
    store.keep(f)  # the edit
    assert str(f) not in watch.known
    f.write_text("B\n")
    made.write_text("by the job\n")
    assert watch.after(started) == []
    lines = store.lines()
    assert [(ln.path, ln.absent) for ln in lines] == [(str(f), False), (str(made), True)]
    assert store.blobs.get(lines[0].blob or "") == b"A\n"
    assert os.path.exists(f)
