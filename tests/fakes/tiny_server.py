"""A minimal MCP server over stdio in plain Python (no SDK import, so it starts in
milliseconds and costs no CPU): it speaks the 2025-11-25 handshake and serves one
``echo`` tool. The benchmarks use it to measure the hub, not Python's imports.

    python tests/fakes/tiny_server.py [--slow-start S] [--ignore-sigterm] [--echo-meta]

``--echo-meta``: ``echo`` answers the call's ``_meta`` as JSON instead of its text (what a
client tells a server beside the arguments).
"""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import Any

ECHO = {"name": "echo", "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]}}


def answer(request: dict[str, Any], echo_meta: bool = False) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "tiny", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [ECHO]}
    elif method == "tools/call":
        params = request.get("params", {})
        text = (json.dumps(params.get("_meta") or {}, sort_keys=True) if echo_meta
                else params.get("arguments", {}).get("text", ""))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    args = sys.argv[1:]
    if "--ignore-sigterm" in args:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "--slow-start" in args:
        time.sleep(float(args[args.index("--slow-start") + 1]))
    for line in sys.stdin:
        reply = answer(json.loads(line), "--echo-meta" in args)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    if "--ignore-sigterm" in args:  # a stuck server: stays after its stdin closes
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
