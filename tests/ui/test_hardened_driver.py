"""Textual's Linux driver, hardened for a terminal that goes away (``exits.py``), keeps
every name of the ``selectors`` module it reads: only ``SelectSelector`` is replaced."""

from __future__ import annotations

import io
import selectors
import threading
import time

import pytest

from tui_agent.ui import exits

linux_driver = pytest.importorskip("textual.drivers.linux_driver")


def test_the_driver_still_finds_all_of_selectors(monkeypatch: pytest.MonkeyPatch) -> None:
    driver = linux_driver.LinuxDriver
    for name in ("WriterThread", "selectors"):  # put back after the test
        monkeypatch.setattr(linux_driver, name, getattr(linux_driver, name))
    monkeypatch.setattr(driver, "_sigcont_application", driver._sigcont_application)
    exits.harden_driver()
    patched = linux_driver.selectors
    assert patched.SelectSelector is exits.HangUpSelector
    assert linux_driver.WriterThread is exits.SafeWriter
    public = [name for name in vars(selectors) if not name.startswith("_")]
    assert {"EVENT_READ", "SelectorKey", "DefaultSelector"} <= set(public)
    for name in public:
        if name != "SelectSelector":
            assert getattr(patched, name, None) is getattr(selectors, name), name


class SlowFile(io.StringIO):
    """A terminal that takes a while to accept each write (as tmux reading a pty does)."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed = ""

    def flush(self) -> None:
        time.sleep(0.05)
        self.flushed = self.getvalue()


def test_the_loading_waits_for_the_first_frame_to_be_on_the_terminal() -> None:
    """The app starts its slow loading (threads that hold the GIL) only once the first
    frame's text is written and flushed: ``when_written`` calls back then, and at once
    when nothing is queued."""
    file = SlowFile()
    writer = exits.SafeWriter(file)
    writer.start()
    try:
        seen: list[str] = []
        done = threading.Event()
        writer.write("frame part 1;")
        writer.write("frame part 2")
        def written() -> None:
            seen.append(file.flushed)
            done.set()

        writer.when_written(written)
        assert done.wait(10)
        assert seen == ["frame part 1;frame part 2"]
        later: list[bool] = []
        writer.when_written(lambda: later.append(True))  # nothing queued: called at once
        assert later == [True]
    finally:
        writer.stop()
        writer.join(10)
    assert not writer.is_alive()
