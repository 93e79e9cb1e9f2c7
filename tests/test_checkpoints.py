"""The checkpoint store of the built-in server (tui_agent/builtin/checkpoints): kept
before a write, restored since a position, bounded, and readable after a kill at any
moment; put back only inside the roots and never through a symbolic link; each change
tagged with its conversation; and through the real hub, the real built-in server keeping
before it writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from tests.conftest import ROOT
from tests.local_kit import local_server
from tui_agent.builtin.checkpoints import Checkpoints, store_for
from tui_agent.builtin.checkpoints.caller import KEY, stores_of
from tui_agent.builtin.checkpoints.journal import read
from tui_agent.config import paths
from tui_agent.config.models import ServerConfig
from tui_agent.tools.call_meta import CALL_META
from tui_agent.tools.hub import Hub


def test_restore_puts_back_what_changed_since_a_position(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store")
    notes, created = tmp_path / "notes.txt", tmp_path / "new.txt"
    notes.write_text("first\n")
    store.keep(notes)
    notes.write_text("second\n")
    mark = store.position()
    store.keep(notes)
    notes.write_text("third\n")
    assert store.keep(created) == ""  # absent: kept as absent
    created.write_text("made by the tool\n")
    store.keep(notes)
    notes.write_text("fourth\n")

    done = store.restore(mark, [str(tmp_path)])

    assert notes.read_text() == "second\n"  # as it was at the mark, not at the start
    assert not created.exists()
    assert (done.restored, done.removed, done.failed) == ([str(notes)], [str(created)], [])
    # the restore kept what it overwrote: it can itself be undone
    store.restore(store.position() - 2, [str(tmp_path)])
    assert notes.read_text() == "fourth\n" and created.read_text() == "made by the tool\n"


def test_position_at_a_time_is_the_first_change_after_it(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store")
    target = tmp_path / "a.txt"
    store.keep(target)
    between = time.time()
    store.keep(target)
    store.keep(target)
    assert store.position_at(between) == 1
    assert store.position_at(time.time() + 60) == store.position() == 3


def test_the_same_content_is_one_blob(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store")
    target = tmp_path / "same.txt"
    target.write_text("unchanged")
    for _ in range(3):
        store.keep(target)
    assert len(list((tmp_path / "store" / "blobs").rglob("*"))) == 2  # a folder, a blob


def test_oldest_changes_are_dropped_past_the_bounds(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store", most_entries=3)
    target = tmp_path / "t.txt"
    for n in range(6):
        target.write_text(f"version {n}\n")
        store.keep(target)
    lines = store.lines()
    assert [line.seq for line in lines] == [3, 4, 5]
    blobs = {p.name for p in (tmp_path / "store" / "blobs").rglob("*") if p.is_file()}
    assert blobs == {line.blob for line in lines}  # the dropped ones' blobs are gone
    done = store.restore(0, [str(tmp_path)])
    assert target.read_text() == "version 3\n"  # as far back as the store goes
    assert "older checkpoints were dropped" in done.note


def test_the_byte_bound_drops_the_oldest_too(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store", most_bytes=250)
    target = tmp_path / "t.txt"
    for n in range(5):
        target.write_text(f"{n}" * 100)
        store.keep(target)
    assert [line.seq for line in store.lines()] == [3, 4]


def test_a_file_too_large_or_not_regular_is_listed_not_kept(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path / "store", most_file=1024)
    big, fifo = tmp_path / "big.bin", tmp_path / "pipe"
    big.write_bytes(b"x" * 4096)
    os.mkfifo(fifo)
    assert "larger than" in store.keep(big)
    with _no_hang():
        assert "not a regular file" in store.keep(fifo)
    assert "not a regular file" in store.keep("/dev/zero")
    big.write_bytes(b"y")
    done = store.restore(0, [str(tmp_path)])
    assert big.read_bytes() == b"y"
    assert {path for path, _ in done.failed} == {str(big), str(fifo), "/dev/zero"}
    assert all(why.startswith("not kept (") for _, why in done.failed)


class _no_hang:  # noqa: N801 - a guard read as a phrase
    """A kept FIFO would block on open forever: fail the test after 5 s instead."""

    def __enter__(self) -> None:
        signal.signal(signal.SIGALRM, self._fail)
        signal.alarm(5)

    def __exit__(self, *_: object) -> None:
        signal.alarm(0)

    @staticmethod
    def _fail(*_: object) -> None:
        raise TimeoutError("keeping a FIFO hung")


def test_a_store_that_cannot_be_written_says_so_and_does_not_raise(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a file where the store's folder should be")
    store = Checkpoints(tmp_path / "file" / "store")
    note = store.keep(tmp_path / "x.txt")
    assert note.startswith(f"no checkpoint of {tmp_path / 'x.txt'}: ")


def test_store_for_a_folder_is_stable_and_distinct(tmp_path: Path) -> None:
    a, b = tmp_path / "proj", tmp_path / "other" / "proj"
    a.mkdir()
    b.mkdir(parents=True)
    assert store_for(a) == store_for(a / ".." / "proj")
    assert store_for(a) != store_for(b)
    assert store_for(a).parent == Path(os.environ["XDG_DATA_HOME"]) / "tui-agent" / "checkpoints"


KEEPER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tui_agent.builtin.checkpoints import Checkpoints
    store, target = Checkpoints(Path(sys.argv[1])), Path(sys.argv[2])
    n = 0
    while True:
        store.keep(target)
        target.write_text(str(n) * (n % 5000))
        n += 1
        if n == 3:
            print("going", flush=True)
""")


def test_a_kill_at_any_moment_leaves_a_readable_journal(tmp_path: Path) -> None:
    """Killed mid-write five times over (SIGKILL at a random point of the loop): every
    line of the journal still reads, in order, and the next keep appends after them."""
    directory, target = tmp_path / "store", tmp_path / "churn.txt"
    script = tmp_path / "keeper.py"
    script.write_text(KEEPER)
    for delay in (0.05, 0.13, 0.21, 0.08, 0.3):
        proc = subprocess.Popen([sys.executable, str(script), str(directory), str(target)],
                                stdout=subprocess.PIPE, cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"going\n"
        time.sleep(delay)
        proc.kill()
        proc.wait(timeout=10)
    journal = directory / "journal.jsonl"
    with journal.open("ab") as out:  # and a line torn as a kill would tear it
        out.write(b'{"seq":99999,"at":1.0,"pa')
    lines = read(journal)
    assert len(lines) > 5
    assert [line.seq for line in lines] == sorted({line.seq for line in lines})
    store = Checkpoints(directory)
    before = store.position()
    assert store.keep(target) == ""
    after = read(journal)
    assert after[-1].seq == before and len(after) == len(lines) + 1
    assert not journal.read_bytes().count(b'"pa\n')  # the torn line was cut, not continued
    for line in after:
        if line.blob:
            store.blobs.get(line.blob)  # every blob the journal names is whole


@pytest.mark.anyio
async def test_the_builtin_server_keeps_before_it_writes_tagged_with_the_conversation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real built-in server (``tui-agent tools serve``) in the project, through the
    real hub: each change it keeps is tagged with the conversation the call's ``_meta``
    names (and the store is noted as that conversation's); a call that names none keeps
    an untagged line; the store restores what it wrote. Another server on the same hub is
    not told the conversation's id."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# original\n")
    monkeypatch.chdir(project)
    config = local_server()
    other = ServerConfig(command=sys.executable,
                         args=[str(ROOT / "tests" / "fakes" / "tiny_server.py"), "--echo-meta"])
    hub = Hub({"local": config, "other": other}, log_dir=tmp_path / "logs", default_timeout=20)
    hub.start()
    try:
        with anyio.fail_after(90):
            await hub.wait_all()
            specs = {s.name: s for s in hub.specs()}
            told = CALL_META.set({KEY: {"session": "20240301-093000-aaaaaa", "turn": 3}})
            try:
                edit = await hub.call(specs["local__edit"], {
                    "path": "README.md", "old_string": "original", "new_string": "changed"})
                told_other = await hub.call(specs["other__echo"], {"text": "x"})
            finally:
                CALL_META.reset(told)
            assert not edit.is_error, edit
            assert KEY not in told_other.text and "20240301" not in told_other.text, told_other
            wrote = await hub.call(specs["local__write"], {"path": "new.md", "content": "hi"})
            assert not wrote.is_error, wrote
    finally:
        await hub.close()
    assert (project / "README.md").read_text() == "# changed\n"
    store = Checkpoints(store_for(project))
    tags = [(line.path, line.session, line.turn) for line in store.lines()]
    assert tags == [(str(project / "README.md"), "20240301-093000-aaaaaa", 3),
                    (str(project / "new.md"), "", -1)]
    root = paths.data_dir() / "checkpoints"
    assert stores_of(root, "20240301-093000-aaaaaa") == [store.directory]
    done = store.restore(0, [str(project)])
    assert (project / "README.md").read_text() == "# original\n"
    assert not (project / "new.md").exists()
    assert (done.restored, done.removed, done.failed) == (
        [str(project / "README.md")], [str(project / "new.md")], [])


def test_a_keep_reads_the_journal_only_when_it_changed_and_a_full_store_trims_in_steps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeps in a row read the journal once (each keep read it twice: with 5,000 lines in a
    full store, every edit took half a second); a journal another process wrote is read
    again; a full store rewrites its journal once past a tenth more, down to its bound;
    what this object writes (a keep, a withdraw, a trim) is what it reads back."""
    from tui_agent.builtin.checkpoints import journal

    reads: list[Path] = []
    real = journal.read

    def counted(path: Path) -> list[journal.Line]:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(journal, "read", counted)
    store = Checkpoints(tmp_path / "store", most_entries=20)
    target = tmp_path / "file.txt"
    for i in range(21):
        target.write_text(f"{i}\n")
        store.keep(target)
    assert len(reads) == 1 and len(store.lines()) == 21
    other = Checkpoints(tmp_path / "store")  # another process: the app restoring
    other.keep(target)
    assert len(store.lines()) == 22 and len(reads) == 3
    inode = os.stat(store.journal).st_ino
    target.write_text("last\n")
    store.keep(target)
    assert os.stat(store.journal).st_ino != inode and len(store.lines()) == 20
    assert store.lines() == real(store.journal) and len(reads) == 3
    store.keep(tmp_path / "made.txt")
    assert store.withdraw(tmp_path / "made.txt") is True
    assert store.lines() == real(store.journal) and len(store.lines()) == 20
    assert len(reads) == 3
    done = store.restore(store.lines()[-1].seq, [str(tmp_path)])
    assert done.restored == [os.path.realpath(target)]
    assert target.read_text() == "last\n"
