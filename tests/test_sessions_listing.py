"""``tui-agent sessions`` as a table a person can read: a long model name is cut with an
ellipsis (never mid-name without one), an unknown cost says so, the cost and cache
columns are padded so every title starts in the same column, and one message is "1 msg".
A conversation nobody said anything in is not kept, nor continued by ``-c``.

The session files are real ones, written by the same writer the agent uses; the listing is
the CLI's own output."""

from __future__ import annotations

import pytest

from tui_agent.cli import main
from tui_agent.config import paths
from tui_agent.core.events import Usage
from tui_agent.core.session import SessionWriter
from tui_agent.tools.hub import Hub
from tui_agent.wiring import build

CHATS = [  # file stem, model, messages, usage
    ("20261125-162618-ec6ea2", "anthropic/claude-sonnet-4-5", 1, Usage(10, 0, 10, 0.0)),
    ("20261125-162640-5f0d32", "anthropic/claude-haiku-4-5", 8,
     Usage(1000, 300, 1300, 0.0076, cache_read_tokens=700)),
    ("20261125-162741-2da177", "ollama_chat/qwen3", 2, Usage(50, 5, 55, None)),
    ("20261125-162801-a0b1c2", "openai/\x1b[31mgpt-4o\x07", 12, Usage(9, 1, 10, 0.0123)),
]


def write_chats() -> None:
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    for stem, model, count, usage in CHATS:
        writer = SessionWriter.create(store / f"{stem}.jsonl", {"model": model})
        for i in range(count):
            role = "user" if i % 2 == 0 else "assistant"
            writer.message({"role": role, "content": f"{stem[-6:]} says {i}"})
        writer.turn_end("end", usage)
        writer.close()


def test_sessions_listing_lines_up(capsys: pytest.CaptureFixture[str]) -> None:
    write_chats()
    assert main(["sessions"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "20261125-162801-a0b1c2   12 msgs  openai/gpt-4o              $0.0123             "
        "a0b1c2 says 0",
        "20261125-162741-2da177    2 msgs  ollama_chat/qwen3          cost ?              "
        "2da177 says 0",
        "20261125-162640-5f0d32    8 msgs  anthropic/claude-haiku-4…  $0.0076  cache 70%  "
        "5f0d32 says 0",
        "20261125-162618-ec6ea2    1 msg   anthropic/claude-sonnet-…  $0.0000             "
        "ec6ea2 says 0",
    ]


def test_a_conversation_with_nothing_said_is_neither_kept_nor_continued(
        capsys: pytest.CaptureFixture[str]) -> None:
    write_chats()
    store = paths.sessions_dir()
    blank = SessionWriter.create(store / "20261125-170000-aaaaaa.jsonl", {"model": "m"})
    assert blank.path.exists()  # there from the start: a crash before a word leaves it
    crashed = store / "20261125-170100-bbbbbb.jsonl"
    crashed.write_bytes(blank.path.read_bytes())  # what a kill before the first word leaves
    blank.close()
    assert not blank.path.exists()
    build.save_metrics(Hub({}, log_dir=store), blank)  # nor its servers' call metrics
    assert not list(store.glob("*aaaaaa*"))
    assert main(["sessions"]) == 0
    listed = capsys.readouterr().out
    assert "aaaaaa" not in listed and "bbbbbb" in listed  # a crash's file is still shown
    assert build.sessions().find(None).stem == CHATS[-1][0]  # -c skips the empty one
