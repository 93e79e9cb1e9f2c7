"""Big tool results without many copies of them (issue 33): what the model and a script
receive stays exact, and the memory a result takes while it passes is bounded.

Memory is counted with ``tracemalloc`` (Python's own allocations, deterministic for a
given path), never timed. The figures of the whole process are the bench's
(``python -m tests.bench.bench_memory``).
"""

from __future__ import annotations

import json
import math
import re
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import fake_server, model_for
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_agent import RecordingGate
from tui_agent.codemode import wire
from tui_agent.config.models import AgentSettings, CodeModeSettings
from tui_agent.core.agent import Agent
from tui_agent.core.events import ToolResult
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import Policy, ServerRules
from tui_agent.core.scripts import CodeMode
from tui_agent.core.session import SessionWriter
from tui_agent.tools.hub import Hub
from tui_agent.tools.transports.stdio import read_messages

MB = 1 << 20
AUTO = {"calc": ServerRules(auto=["big", "echo"])}


@asynccontextmanager
async def agent_with(fake_llm: FakeLLM, tmp_path: Path, *, code_mode: bool = True,
                     **settings: Any) -> AsyncIterator[Agent]:
    servers = {"calc": fake_server()}
    hub = Hub(servers, log_dir=tmp_path / "logs", default_timeout=30)
    hub.start()
    try:
        await hub.wait_all()
        yield Agent(LLM(model_for(fake_llm)), hub, RecordingGate(), policy=Policy(AUTO),
                    settings=AgentSettings(**settings),
                    code_mode=CodeMode(CodeModeSettings(enabled=True, timeout=120), servers)
                    if code_mode else None)
    finally:
        await hub.close()


def script(code: str) -> Reply:
    return Reply(tool_calls=[FakeToolCall("executeToolCode", {"code": code}, id="s1")])


class Peak:
    """Bytes traced above what was in use when the block began, at the most."""

    above = 0


@contextmanager
def traced() -> Iterator[Peak]:
    peak = Peak()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        yield peak
        peak.above = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def big_blocks() -> list[int]:
    """Sizes of the traced blocks of 1 MB or more alive now."""
    return [t.size for t in tracemalloc.take_snapshot().traces if t.size >= MB]


# -- what crosses stays exact ------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "", "short", "é\"\\\n\t\u2028" * 200_000, {"a": ["x" * 300_000, 1, 2.5, None, True]},
    [], {}, [{"k": "v"}, [["deep"]]], math.inf, {"1": {"2": "y" * (wire.PIECE * 2 + 7)}},
])
def test_a_value_written_in_pieces_is_the_json_of_the_value(value: Any) -> None:
    assert "".join(wire.pieces(value)) == json.dumps(value, ensure_ascii=False)
    assert wire.size(value) == len(json.dumps(value, ensure_ascii=False).encode())


@pytest.mark.anyio
async def test_the_reader_splits_messages_across_and_within_chunks() -> None:
    """Messages cut anywhere between chunks (and several in one chunk) arrive whole and
    in order; a line that is not JSON-RPC arrives as its error, and reading goes on."""
    text = "é\"x\\" * 100_000
    lines = [json.dumps({"jsonrpc": "2.0", "id": n, "result": {"n": n, "text": text}})
             for n in range(3)]
    data = (lines[0] + "\n" + "not json\n" + lines[1] + "\n" + lines[2] + "\n").encode()
    send, receive = anyio.create_memory_object_stream[bytes](100)
    for at in range(0, len(data), 65_536 - 17):  # cuts inside a character too
        await send.send(data[at:at + 65_536 - 17])
    send.close()
    out_send, out = anyio.create_memory_object_stream[Any](100)
    await read_messages(receive, out_send)
    got = [out.receive_nowait() for _ in range(4)]
    assert isinstance(got[1], ValueError)
    results = [m.message.result for m in (got[0], got[2], got[3])]
    assert [r["n"] for r in results] == [0, 1, 2]
    assert all(r["text"] == text for r in results)


@pytest.mark.anyio
async def test_a_bad_line_is_that_messages_error_and_reading_goes_on() -> None:
    """Nesting too deep for ``json``, bytes that are not UTF-8, a lone surrogate (which
    ``json`` lets through and the session file could not encode), and an unended last
    line: each bad line arrives as its own error, the good ones after it arrive whole, and
    a surrogate pair written as escapes is still text."""
    good = [json.dumps({"jsonrpc": "2.0", "id": n, "result": {"text": "\U0001F600"}})
            for n in range(4)]
    data = b"".join([
        b"[" * 100_000 + b"\n", good[0].encode() + b"\n",
        b'{"jsonrpc": "2.0", "id": 9, "result": {"t": "\xff"}}\n', good[1].encode() + b"\n",
        b'{"jsonrpc": "2.0", "id": 8, "result": {"t": "x\\ud800y"}}\n',
        good[2].encode() + b"\n", good[3].encode() + b"\n", b'{"jsonrpc": "2.0", "id": 7'])
    send, receive = anyio.create_memory_object_stream[bytes](10)
    await send.send(data)
    send.close()
    out_send, out = anyio.create_memory_object_stream[Any](10)
    await read_messages(receive, out_send)
    got = [out.receive_nowait() for _ in range(7)]
    assert [isinstance(g, Exception) for g in got] == [True, False, True, False, True, False,
                                                       False]
    assert [g.message.id for g in (got[1], got[3], got[5], got[6])] == [0, 1, 2, 3]
    assert got[6].message.result == {"text": "\U0001F600"}
    with pytest.raises(anyio.WouldBlock):  # the unended line is dropped, as the SDK does
        out.receive_nowait()


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_script_gets_a_big_value_exactly_and_the_model_its_result(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A string of 900,000 characters with quotes, backslashes, newlines and non-ASCII goes to the
    server, comes back (over many pipe reads), and reaches the script unchanged."""
    code = ('s = "é\\"\\\\\\nok" * 150000\nt = calc.echo(text=s)\n'
            'result = [t == s, len(t), t[:4]]')
    fake_llm.push(script(code), Reply(text="done"))
    async with agent_with(fake_llm, tmp_path) as agent:
        events = [e async for e in agent.run_turn("go")]
    inner = next(e for e in events if isinstance(e, ToolResult) and e.id == "s1.1")
    assert not inner.is_error and len(inner.text) == 6 * 150_000
    tool = agent.messages[-2]
    assert tool["role"] == "tool"
    assert tool["content"].startswith('result: [\n true,\n 900000,\n "é\\"\\\\\\n"\n]')


# -- the memory a result takes while it passes ---------------------------------------------

@pytest.mark.anyio
@pytest.mark.slow
async def test_a_big_result_is_read_without_copies_of_it(fake_llm: FakeLLM,
                                                         tmp_path: Path) -> None:
    """A 3 MB result (sent as text and again as structured content: 6 MB on the wire)
    is read, parsed and rendered holding the text about twice at most (its bytes, then
    its str, once for both copies); the whole line, its text and its values held four
    times the text, and the SDK's reader more."""
    size = 3 * MB
    async with agent_with(fake_llm, tmp_path, code_mode=False) as agent:
        big = next(s for s in agent.tools.specs() if s.tool == "big")
        await agent.tools.call(big, {"size": size})  # the first call's one-time costs
        with traced() as peak:
            outcome = await agent.tools.call(big, {"size": size})
    assert len(outcome.text) == size
    assert peak.above < 2.5 * size, f"{peak.above / MB:.1f} MB for a {size / MB:g} MB result"


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_script_s_results_do_not_pile_up_in_the_host(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Five 2 MB results in one script: the host holds one call's result at a time
    (not all five, not several copies of one, and not the one before it, which the
    SDK's read loop kept until the next message came): the peak stays under 6 times a
    result, and nothing of them is left once the turn is over."""
    size = 2 * MB
    code = (f"n = 0\nfor i in range(5):\n    n += len(calc.big(size={size}))\n"
            f"result = n")
    fake_llm.push(script("result = len(calc.big(size=10))"), Reply(text="warm"),
                  script(code), Reply(text="done"))
    async with agent_with(fake_llm, tmp_path) as agent:
        [e async for e in agent.run_turn("warm up")]
        with traced() as peak:
            results = [len(e.text) async for e in agent.run_turn("go")  # as a front end
                       if isinstance(e, ToolResult) and not e.is_error]  # drops each one
            left = big_blocks()
    assert agent.messages[-2]["content"].startswith(f"result: {5 * size}")
    assert results == [size] * 5 + [len(agent.messages[-2]["content"])]
    assert peak.above < 6 * size, f"{peak.above / MB:.1f} MB for {size / MB:g} MB results"
    assert left == [], [b / MB for b in left]


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_big_direct_result_is_cut_for_the_model_and_kept_whole_beside_the_session(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    size = 600_000
    fake_llm.push(Reply(tool_calls=[FakeToolCall("calc__big", {"size": size}, id="b1")]),
                  Reply(text="done"))
    writer = SessionWriter.create(tmp_path / "s.jsonl", {})
    async with agent_with(fake_llm, tmp_path, code_mode=False,
                          max_tool_output=1_000) as agent:
        agent.session = writer
        [e async for e in agent.run_turn("go")]
    writer.close()
    saved = tmp_path / "s.results" / "b1.txt"
    whole = saved.read_text(encoding="utf-8")
    assert len(whole) == size and whole.startswith("0123456789")
    sent = fake_llm.requests[-1]["messages"][-1]["content"]
    assert sent.startswith(whole[:4_000])
    assert sent.endswith(f"[output cut: the first 4,000 of {size:,} characters (about 1,000 "
                         f"tokens) are shown. The full result is in {saved}.]")
    records = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    tool = next(r["message"] for r in records if r.get("message", {}).get("role") == "tool")
    assert tool["content"] == sent


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_reply_s_big_direct_results_do_not_stay_until_its_last_call_ends(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """Five 2 MB results asked for in one reply: each is cut for the model (and kept
    whole on disk) as it comes, and nothing of the whole stays in memory until the
    reply's last call ends (the structured copy did, on each call's outcome)."""
    size = 2 * MB
    calls = [FakeToolCall("calc__big", {"size": size}, id=f"b{n}") for n in range(5)]
    fake_llm.push(Reply(tool_calls=[FakeToolCall("calc__big", {"size": 10}, id="w")]),
                  Reply(text="warm"), Reply(tool_calls=calls), Reply(text="done"))
    writer = SessionWriter.create(tmp_path / "s.jsonl", {})
    async with agent_with(fake_llm, tmp_path, code_mode=False) as agent:
        agent.session = writer
        [e async for e in agent.run_turn("warm up")]
        with traced() as peak:
            shown = [len(e.text) async for e in agent.run_turn("go")
                     if isinstance(e, ToolResult)]
    writer.close()
    assert shown == [len(agent.messages[-2]["content"])] * 5  # each cut the same way
    assert all((tmp_path / "s.results" / f"b{n}.txt").stat().st_size == size
               for n in range(5))
    assert peak.above < 8 * size, f"{peak.above / MB:.1f} MB for {size / MB:g} MB results"


def test_the_sdk_still_has_the_helpers_our_stdio_transport_calls() -> None:
    """Our stdio transport calls the SDK's private helpers (``mcp`` is pinned below 2.4 for
    them): an SDK without one would fail at every stdio server's start."""
    import inspect

    from mcp.client import stdio as sdk

    from tui_agent.tools.transports import stdio

    used = set(re.findall(r"\bsdk\.(_\w+)", inspect.getsource(stdio)))
    assert {"_get_executable_command", "_create_platform_compatible_process",
            "_drain_stdout", "_stop_server_process", "_aclose_all",
            "_WRITER_FLUSH_TIMEOUT"} <= used
    assert [name for name in sorted(used) if not hasattr(sdk, name)] == []
