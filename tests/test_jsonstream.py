"""The big-message parse (:mod:`tui_agent.tools.transports.jsonstream`) gives what
``json.loads`` gives the whole line, wherever the chunks are cut, and refuses what it
refuses; a long string repeated in a message is held once; and over the real stdio
transport a big, tricky result arrives exact while a broken big line is only its own
message's error.

The generated cases are seeded (the same every run); the string-length threshold is
lowered in most of them so that short messages exercise the long-string paths.
"""

from __future__ import annotations

import json
import random
import sys
import tracemalloc
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests.conftest import ROOT, tagged_env
from tui_agent.tools.transports import jsonstream
from tui_agent.tools.transports.jsonstream import JsonStream, LoneSurrogate
from tui_agent.tools.transports.stdio import read_messages, stdio_client

MB = 1 << 20
ALPHABET = ['a', 'b', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\r', '\x00', '\x1f', '\x7f',
            'é', '€', '\u2028', '\U0001F600', '\ufeff', '\x85', '{', '}', ':', ',']


@pytest.fixture(params=[0, 2], ids=["pattern", "find"])
def short_long(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Strings over 40 bytes are long, and 40 bytes are scanned at a time; a string's end
    is sought by the pattern alone, or by ``find`` until two escaped quotes."""
    monkeypatch.setattr(jsonstream, "LONG", 40)
    monkeypatch.setattr(jsonstream, "WINDOW", 40)
    monkeypatch.setattr(jsonstream, "ESCAPED_QUOTES", request.param)


def text(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, most)))


def value(rng: random.Random, depth: int, seen: list[str]) -> Any:
    """A JSON value; long strings sometimes repeat (or nearly repeat) one made before."""
    kind = rng.randrange(10 if depth < 4 else 7)
    if kind == 0:
        return rng.choice([0, -1, 7, 2**70, -(2**64), True, False, None])
    if kind == 1:
        return rng.choice([0.5, -0.0, 1e300, 1e-7, 3.141592653589793, -2.5e-308])
    if kind in (2, 3):
        return text(rng, 12)
    if kind in (4, 5, 6):
        if seen and rng.random() < 0.5:
            again = rng.choice(seen)
            return rng.choice([again, again, again[:-1], again + "x", again[:-1] + "é",
                               again[: len(again) // 2]])
        seen.append(text(rng, 200))
        return seen[-1]
    if kind in (7, 8):
        return [value(rng, depth + 1, seen) for _ in range(rng.randint(0, 4))]
    return {(text(rng, 60) if rng.random() < 0.2 else text(rng, 6)): value(rng, depth + 1, seen)
            for _ in range(rng.randint(0, 4))}


def dumped(rng: random.Random, data: Any) -> str:
    return json.dumps(data, ensure_ascii=rng.random() < 0.3,
                      indent=rng.choice([None, None, 1]),
                      separators=rng.choice([None, (",", ":")]))


def chunks(data: bytes, rng: random.Random, most: int) -> Iterator[bytes]:
    at = 0
    while at < len(data):
        size = rng.randint(1, most)
        yield data[at:at + size]
        at += size


def streamed(data: bytes, rng: random.Random, most: int = 50) -> Any:
    stream = JsonStream()
    for piece in chunks(data, rng, most):
        stream.feed(piece)
    return stream.values()


def oracle(data: bytes) -> Any:
    """What the parse must give: ``json.loads`` of the line, a lone surrogate refused."""
    values = json.loads(data.decode())
    jsonstream.refuse_lone_surrogates(values)
    return values


def same(got: Any, expected: Any) -> None:
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # types too (1 is not 1.0 nor True)


# -- exactly what json.loads gives ---------------------------------------------------------

@pytest.mark.usefixtures("short_long")
def test_generated_messages_parse_as_json_loads_parses_them_wherever_they_are_cut() -> None:
    rng = random.Random(33)
    for _ in range(400):
        data = dumped(rng, value(rng, 0, [])).encode()
        same(streamed(data, rng, rng.choice([1, 3, 17, 200])), oracle(data))


@pytest.mark.usefixtures("short_long")
def test_damaged_messages_are_refused_as_json_loads_refuses_them() -> None:
    """Bytes cut off, dropped or put in (a quote, a backslash, an escape's letter, a
    byte that is not UTF-8, half a surrogate pair): where ``json.loads`` refuses the line
    the parse raises a ValueError too, and where it takes it the values are the same."""
    rng = random.Random(4)
    noise = [b'"', b"\\", b"u", b"\\ud83d", b"\\udc00", b"\xff", b"\xc3", b"\x01", b"]",
             b"{", b"0", b" "]
    refused = 0
    for _ in range(1500):
        data = bytearray(dumped(rng, value(rng, 0, [])).encode())
        at = rng.randrange(len(data) + 1)
        match rng.randrange(3):
            case 0:
                del data[at:]
            case 1:
                del data[at:at + rng.randint(1, 3)]
            case _:
                data[at:at] = rng.choice(noise)
        try:
            expected = oracle(bytes(data))
        except (ValueError, RecursionError):
            refused += 1
            with pytest.raises(ValueError):
                streamed(bytes(data), rng)
        else:
            same(streamed(bytes(data), rng), expected)
    assert refused > 500  # the damage mostly did break the JSON


@pytest.mark.parametrize("escape", ['"\\ud800"', '"\\uDFFF x"', '"x\\udc00\\ud83d"',
                                    '"\\ud83d\\u0041"'])
def test_a_lone_surrogate_is_refused_in_a_long_string_and_in_the_skeleton(
        escape: str) -> None:
    filler = "y" * (jsonstream.LONG + 10)
    for doc in (f'{{"a": "{filler}", "b": {escape}}}',  # the skeleton's string
                f'{{"b": {escape[:-1]}{filler}"}}',  # a long string
                f'{{"{filler}": 1, {escape}: 2}}'):  # a key
        with pytest.raises(LoneSurrogate):
            streamed(doc.encode(), random.Random(1), 7000)


def test_a_surrogate_pair_written_as_escapes_is_one_character() -> None:
    filler = "é" * jsonstream.LONG
    doc = f'["\\ud83d\\ude00{filler}\\ud83D\\uDE00", "\\ud83d\\ude00"]'.encode()
    same(streamed(doc, random.Random(2), 999), ["\U0001F600" + filler + "\U0001F600",
                                                 "\U0001F600"])


@pytest.mark.parametrize("depth", [50, 5_000, 100_000])
def test_nesting_is_refused_where_json_refuses_it(depth: int) -> None:
    doc = ("[" * depth + '"' + "x" * (jsonstream.LONG * 2) + '"' + "]" * depth).encode()
    try:
        expected = json.loads(doc)
    except RecursionError:
        with pytest.raises(RecursionError):
            streamed(doc, random.Random(3), 65_536)
    else:
        same(streamed(doc, random.Random(3), 65_536), expected)


def test_an_unended_string_is_refused() -> None:
    for doc in (b'{"a": "' + b"x" * (jsonstream.LONG * 2), b'{"a": "xy', b'["\\'):
        with pytest.raises(ValueError, match="Unterminated string"):
            streamed(doc, random.Random(5), 4096)


# -- a long string repeated is held once -----------------------------------------------------

def fastmcp_message(result: str, *, structured: str | None = None, **dump: Any) -> bytes:
    """A tool result as FastMCP sends a returned str: a text block and
    ``structuredContent`` ``{"result": ...}``."""
    return json.dumps({"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": result}],
        "structuredContent": {"result": result if structured is None else structured},
        "isError": False}}, **dump).encode()


BIG = ("line with \"quotes\", \\ and é€😀\u2028\t\x01\n" * 20_000)


@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_the_structured_copy_of_a_text_is_the_same_string(ensure_ascii: bool) -> None:
    values = streamed(fastmcp_message(BIG, ensure_ascii=ensure_ascii), random.Random(6), 65_536)
    result = values["result"]
    assert result["content"][0]["text"] == BIG
    assert result["structuredContent"]["result"] is result["content"][0]["text"]


@pytest.mark.parametrize("other", [BIG[:-1] + "!", BIG + "more", BIG[:100_000], "é" + BIG[1:],
                                   BIG[:500_000] + "\\" + BIG[500_001:]])
def test_a_string_that_only_starts_like_one_before_is_read_as_itself(other: str) -> None:
    data = fastmcp_message(BIG, structured=other, ensure_ascii=False)
    same(streamed(data, random.Random(7), 65_536), json.loads(data))


def test_a_repeat_escaped_differently_is_still_read_exactly() -> None:
    """``\\u00e9`` where the first copy had ``é``: not the same bytes, so read on its own."""
    data = fastmcp_message(BIG, ensure_ascii=False).replace(b"\xc3\xa9", b"\\u00e9", 20_000)
    same(streamed(data, random.Random(8), 65_536), json.loads(data))


def test_a_big_message_is_parsed_holding_its_text_about_twice_at_most() -> None:
    """A 7 MB text sent twice (14 MB on the wire), fed as the pipe gives it: the parse
    never holds more than about two copies of the text (the whole line, its text and its
    values, as before, were four)."""
    size = 7 * MB
    big = ("0123456789" * 9 + "abcdefghi\n") * (size // 100)
    data = fastmcp_message(big)
    pieces = [data[at:at + 65_536] for at in range(0, len(data), 65_536)]
    del data
    tracemalloc.start()
    try:
        stream = JsonStream()
        while pieces:
            stream.feed(pieces.pop(0))
        values = stream.values()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert values["result"]["content"][0]["text"] == big
    assert peak < 2.2 * size, f"{peak / MB:.1f} MB for a {size / MB:g} MB text"


# -- over the real stdio transport ---------------------------------------------------------

@pytest.mark.anyio
async def test_a_big_tricky_result_arrives_exact_over_stdio_with_one_copy_of_its_text() -> None:
    """Our fake MCP server (FastMCP) echoes 2 MB of quotes, backslashes, controls,
    non-ASCII and emoji back: the text block is exact and the structured content is the
    very same string."""
    from mcp import Client, StdioServerParameters

    sent = BIG[: 2 * MB // 2] + "\x00 end"
    params = StdioServerParameters(command=sys.executable, args=["-m", "tests.fakes.mcp_server"],
                                   cwd=str(ROOT), env=tagged_env())
    with open("/dev/null", "w") as devnull:
        async with Client(stdio_client(params, errlog=devnull)) as client:
            result = await client.call_tool("echo", {"text": sent})
            again = await client.call_tool("echo", {"text": "small"})
    assert result.content[0].text == sent  # type: ignore[union-attr]
    assert result.structured_content is not None
    assert result.structured_content["result"] is result.content[0].text  # type: ignore[union-attr]
    assert again.structured_content == {"result": "small"}


@pytest.mark.anyio
async def test_a_broken_big_line_is_its_own_error_and_the_next_message_arrives() -> None:
    """Big lines (read as they arrive) broken in a long string (a bad escape, a control
    character, bytes that are not UTF-8, a lone surrogate), in the structure, nested too
    deep, or cut short by the newline: each is one error, and the good message after
    each arrives whole."""
    long = "z" * (200 * 1024)
    good = [json.dumps({"jsonrpc": "2.0", "id": n, "result": {"text": long + str(n)}})
            for n in range(7)]
    bad = [f'{{"jsonrpc": "2.0", "id": 9, "result": {{"t": "{long}\\q"}}}}'.encode(),
           f'{{"jsonrpc": "2.0", "id": 9, "result": {{"t": "{long}\x01"}}}}'.encode(),
           b'{"jsonrpc": "2.0", "id": 9, "result": {"t": "' + long.encode() + b'\xff"}}',
           f'{{"jsonrpc": "2.0", "id": 9, "result": {{"t": "{long}\\udc00"}}}}'.encode(),
           f'{{"jsonrpc": "2.0", "id": 9, "result": {{"t": "{long}" "u"}}}}'.encode(),
           b"[" * 100_000,
           f'{{"jsonrpc": "2.0", "id": 9, "result": {{"t": "{long}'.encode()]
    data = b"".join(b + b"\n" + g.encode() + b"\n" for b, g in zip(bad, good, strict=True))
    send, receive = anyio.create_memory_object_stream[bytes](1000)
    for at in range(0, len(data), 65_536):
        await send.send(data[at:at + 65_536])
    send.close()
    out_send, out = anyio.create_memory_object_stream[Any](100)
    await read_messages(receive, out_send)
    got = [out.receive_nowait() for _ in range(14)]
    assert [isinstance(g, ValueError | RecursionError) for g in got] == [True, False] * 7
    assert [g.message.result["text"] for g in got[1::2]] == [long + str(n) for n in range(7)]
    with pytest.raises(anyio.WouldBlock):
        out.receive_nowait()
