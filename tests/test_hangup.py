"""The terminal going away (a closed window, a dropped SSH session, a killed tmux) ends
the app within seconds, every time, with its servers stopped: through the real command
on a real pseudo-terminal whose other end is closed at each moment of start-up and of
a reply."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.conftest import FAKE_MODEL, tagged_processes
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_shutdown import STREAM, Terminal, latest_session
from tests.ui.kit import write_config

pytestmark = pytest.mark.slow

EXIT_WITHIN = 5.0
"""Seconds the test allows (the app itself takes well under 2 s; this is a shared machine)."""


def hang_up(term: Terminal) -> float:
    """Close the terminal's other end, as a closed window does; how long the app took to
    end (it is killed and the test fails if it outlives ``EXIT_WITHIN``)."""
    os.close(term.fd)
    started = time.monotonic()
    while time.monotonic() - started < EXIT_WITHIN:
        pid, _ = os.waitpid(term.pid, os.WNOHANG)
        if pid:
            return time.monotonic() - started
        time.sleep(0.02)
    os.kill(term.pid, 9)
    os.waitpid(term.pid, 0)
    raise AssertionError(f"the app was still running {EXIT_WITHIN:g} s after its terminal "
                         "went away")


def settle(tag: str) -> list[int]:
    deadline = time.monotonic() + 3
    while (left := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("servers", [True, False], ids=["with-servers", "no-servers"])
@pytest.mark.parametrize("after", [0.0, 0.15, 0.4, "first-frame"])
def test_the_app_ends_when_its_terminal_goes(servers: bool, after: float | str,
                                             fake_llm: FakeLLM, tmp_path: Path,
                                             no_leftover_servers: str) -> None:
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          servers={"a": [], "b": []} if servers else None)
    term = Terminal("--config", str(config))
    if after == "first-frame":
        term.wait_for(FAKE_MODEL.encode())
    else:
        assert isinstance(after, float)
        time.sleep(after)
    hang_up(term)
    assert not settle(no_leftover_servers), "a server outlived the app"


def test_the_app_ends_when_its_terminal_goes_mid_reply(fake_llm: FakeLLM, tmp_path: Path,
                                                       no_leftover_servers: str) -> None:
    fake_llm.push(STREAM, Reply(text="unused"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, servers={"a": []})
    term = Terminal("--config", str(config))
    term.wait_for(FAKE_MODEL.encode())
    time.sleep(0.3)
    term.type(b"hello\r")
    term.wait_for(b"streaming word")
    hang_up(term)
    assert not settle(no_leftover_servers), "a server outlived the app"
    last = latest_session().entries[-1]
    assert last.message["role"] == "assistant" and last.incomplete
