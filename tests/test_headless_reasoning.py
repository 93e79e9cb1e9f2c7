"""The model's thinking and the cache counts without the TUI: ``--output jsonl`` prints
``reasoning`` events (secrets masked across pieces, as the reply's text is) and
``done.usage`` carries the cache and reasoning counts; text mode keeps the thinking off
stdout, and shows it on stderr only with ``--show-reasoning`` (dim on a terminal), in a
one-turn run and in the line-mode chat; ``sessions`` shows the cached share.

The turns run the real agent, printers and masker with a scripted reasoning model (the
agent forwards its ``ReasoningDelta`` events as it does a provider's)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import select
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tui_agent.cli import main
from tui_agent.cli.parser import build_parser
from tui_agent.config import load, paths
from tui_agent.core.agent import Agent
from tui_agent.core.events import ReasoningDelta, TextDelta, Usage
from tui_agent.core.llm import Reply
from tui_agent.core.permissions import Policy
from tui_agent.core.session import SessionWriter
from tui_agent.headless.gate import make_gate
from tui_agent.headless.printers import DIM, UNDIM, JsonPrinter, Printer, TextPrinter
from tui_agent.headless.repl import chat_loop
from tui_agent.headless.run import Run, printer_for
from tui_agent.headless.turn import one_turn
from tui_agent.wiring import build

SECRET = "sk-live-SECRET123"
USAGE = Usage(1000, 300, 1300, 0.0123, cache_read_tokens=910, cache_write_tokens=64,
              reasoning_tokens=212)


class Thinker:
    """A reasoning model, scripted: it thinks in ``pieces``, then answers."""

    def __init__(self, pieces: Sequence[str], answer: str = "The answer is 385.") -> None:
        self.pieces, self.answer = list(pieces), answer

    @property
    def model(self) -> str:
        return "test/thinker"

    async def stream(self, messages: Sequence[dict[str, Any]],
                     tools: Sequence[dict[str, Any]] = ()) -> AsyncGenerator[Any, None]:
        for piece in self.pieces:
            yield ReasoningDelta(piece)
            await asyncio.sleep(0)
        yield TextDelta(self.answer)
        yield Reply(self.answer, [], "stop", USAGE)


def agent_for(model: Thinker, tmp_path: Path) -> Agent:
    config = tmp_path / "c.toml"
    config.write_text('[model]\nname = "openai/x"\n', encoding="utf-8")
    settings = load(config)
    return build.agent(settings, model, make_gate("deny"), Policy({}))


def turn(model: Thinker, printer: Printer, tmp_path: Path) -> int:
    return asyncio.run(one_turn(agent_for(model, tmp_path), "sum the first ten squares",
                                printer))


def test_jsonl_prints_reasoning_before_the_text_and_the_counts_in_done(tmp_path: Path) -> None:
    out = io.StringIO()
    assert turn(Thinker(["Squares: ", "n(n+1)(2n+1)/6 ", "= 385."]), JsonPrinter(out),
                tmp_path) == 0
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = [e["type"] for e in events if e["type"] not in ("context",)]
    assert kinds == ["reasoning", "reasoning", "reasoning", "text", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "reasoning") == \
        "Squares: n(n+1)(2n+1)/6 = 385."
    usage = events[-1]["usage"]
    assert (usage["cache_read_tokens"], usage["cache_write_tokens"],
            usage["reasoning_tokens"]) == (910, 64, 212)


def test_jsonl_masks_a_secret_split_across_reasoning_pieces(tmp_path: Path) -> None:
    """The model thinks the key aloud, in two pieces: the joined reasoning is masked, and
    no line holds either half of it followed by the other."""
    out = io.StringIO()
    turn(Thinker(["the key is sk-live-", "SECRET123, do not say it"]),
         JsonPrinter(out, frozenset({SECRET})), tmp_path)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    thought = "".join(e["delta"] for e in events if e["type"] == "reasoning")
    assert thought == "the key is ***, do not say it"
    assert "SECRET123" not in out.getvalue()


def test_text_mode_keeps_the_thinking_off_stdout(tmp_path: Path) -> None:
    """Without ``--show-reasoning`` the thinking is not shown at all; with it, it goes to
    stderr after a label, its line ended before anything else, and stdout holds the
    reply alone (plain: stderr is no terminal)."""
    pieces = ["", "\n", "First ", "square ", "them.\nThen add."]  # some open with empty ones
    out, err = io.StringIO(), io.StringIO()
    turn(Thinker(pieces), TextPrinter(out, err), tmp_path)
    assert (out.getvalue(), err.getvalue()) == ("The answer is 385.\n", "")

    out, err = io.StringIO(), io.StringIO()
    turn(Thinker(pieces), TextPrinter(out, err, reasoning=True), tmp_path)
    assert out.getvalue() == "The answer is 385.\n"
    assert err.getvalue() == "thinking: First square them.\nThen add.\n"


def test_show_reasoning_is_dim_on_a_terminal_and_cleaned(tmp_path: Path) -> None:
    """On a terminal each piece is dimmed and undimmed (an interrupted run never leaves
    the terminal dim); the model's own escape sequences are removed."""
    leader, follower = pty.openpty()
    try:
        with open(follower, "w", encoding="utf-8") as err:  # closed: the reads below end
            turn(Thinker(["careful \x1b]52;c;ZXZpbA==\x07", "now\x1b[2J"]),
                 TextPrinter(io.StringIO(), err, reasoning=True), tmp_path)
        shown = read_all(leader)
    finally:
        os.close(leader)
    assert shown.replace("\r\n", "\n") == (f"{DIM}thinking: careful {UNDIM}{DIM}now{UNDIM}\n")


def read_all(leader: int) -> str:
    """What the terminal got, whole: one read may return only part of it (a loaded
    machine), and with the other end closed the reads end in EIO."""
    got = b""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not select.select([leader], [], [], 0.5)[0]:
            continue
        try:
            piece = os.read(leader, 4096)
        except OSError:
            break
        if not piece:
            break
        got += piece
    return got.decode()


def test_the_flag_reaches_the_text_printer(tmp_path: Path) -> None:
    """``run --show-reasoning`` parses, and the run's printer shows the thinking; it is a
    flag of ``run`` only."""
    args = build_parser().parse_args(["run", "--show-reasoning", "hi"])
    config = tmp_path / "c.toml"
    config.write_text('[model]\nname = "openai/x"\n', encoding="utf-8")
    run = Run(load(config), "hi", "deny", "text", show_reasoning=args.show_reasoning)
    out, err = io.StringIO(), io.StringIO()
    printer = printer_for(run, out, err)
    printer.show(ReasoningDelta("hmm"))
    printer.show(TextDelta("ok"))
    assert (out.getvalue(), err.getvalue()) == ("ok", "thinking: hmm\n")
    assert not build_parser().parse_args(["run", "hi"]).show_reasoning

    with pytest.raises(SystemExit) as exited:
        main(["--show-reasoning", "run", "hi"])
    assert exited.value.code == 2


def test_line_mode_chat_shows_the_thinking_on_stderr(tmp_path: Path) -> None:
    """The line-mode chat (``run`` without a prompt) prints each turn the same way."""
    reader, writer = os.pipe()
    os.write(writer, b"sum the squares\n")
    os.close(writer)  # then end of input: the chat ends
    out, err = io.StringIO(), io.StringIO()
    with open(reader, encoding="utf-8") as stdin:
        code = asyncio.run(chat_loop(agent_for(Thinker(["add ", "them"]), tmp_path),
                                     TextPrinter(out, err, reasoning=True), out, stdin))
    assert code == 0
    assert err.getvalue() == "thinking: add them\n"
    assert "The answer is 385.\n" in out.getvalue() and "add them" not in out.getvalue()


def test_sessions_listing_shows_the_cached_share(capsys: pytest.CaptureFixture[str]) -> None:
    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    for name, usage in (("cached", USAGE), ("plain", Usage(100, 10, 110, 0.001))):
        writer = SessionWriter.create(store / f"{name}.jsonl", {"model": "anthropic/claude"})
        writer.message({"role": "user", "content": f"a {name} chat"})
        writer.turn_end("end", usage)
        writer.close()
    assert main(["sessions"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "$0.0123  cache 91%  a cached chat" in lines["cached"]
    assert "cache" not in lines["plain"]  # its column blank, padded: the titles line up
    assert "$0.0010" + " " * 13 + "a plain chat" in lines["plain"]
