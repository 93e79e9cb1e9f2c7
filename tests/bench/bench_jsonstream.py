"""Parse time of a big message: the line joined whole and given to ``json`` (the way a
big message was parsed before) against :class:`~tui_agent.tools.transports.jsonstream.
JsonStream` fed the 64 KB chunks the pipe gives; both then validated by the SDK's adapter.

Two messages: FastMCP's tool result of a 7 MB text (sent as text and as structured
content: 14 MB), and ~13 MB of small values (300,000 rows, no long string).

    python -m tests.bench.bench_jsonstream [--rounds 5]

Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from tests.bench._common import median
from tui_agent.tools.transports.jsonstream import JsonStream

CHUNK = 65_536


def messages() -> dict[str, bytes]:
    size = 7 << 20
    big = ("0123456789" * 9 + "abcdefghi\n") * (size // 100)
    rows = [{"name": f"n{i}", "v": i, "t": "x\ny"} for i in range(300_000)]
    return {
        "FastMCP 7 MB text, 14 MB message": json.dumps({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": big}],
            "structuredContent": {"result": big}, "isError": False}}).encode(),
        "13 MB of small values": json.dumps({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [], "structuredContent": {"rows": rows}}}).encode(),
    }


def whole(line: bytes) -> Any:
    import mcp_types as types

    return types.jsonrpc_message_adapter.validate_python(json.loads(line.decode()),
                                                         by_name=False)


def streamed(line: bytes) -> Any:
    import mcp_types as types

    stream = JsonStream()
    for at in range(0, len(line), CHUNK):
        stream.feed(line[at:at + CHUNK])
    return types.jsonrpc_message_adapter.validate_python(stream.values(), by_name=False)


def timed(parse: Callable[[bytes], Any], line: bytes, rounds: int) -> float:
    took = []
    for _ in range(rounds):
        start = time.perf_counter()
        parse(line)
        took.append(time.perf_counter() - start)
    return median(took) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for name, line in messages().items():
        before, after = timed(whole, line, args.rounds), timed(streamed, line, args.rounds)
        print(f"{name}: whole line + json {before:.0f} ms, as it arrives {after:.0f} ms "
              f"({after / before:.2f}x)")


if __name__ == "__main__":
    main()
