"""Textual's Linux driver, hardened for a terminal that goes away (``exits.py``), keeps
every name of the ``selectors`` module it reads: only ``SelectSelector`` is replaced."""

from __future__ import annotations

import selectors

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
