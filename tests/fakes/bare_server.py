"""An MCP server over stdio written without the SDK, in the 2026-07-28 protocol only, so it
can answer what the SDK's own server never would: ``plain``'s result leaves out
``resultType`` (which the revision says means ``complete``, as servers written before it
do), ``broken``'s result breaks the schema (its ``content`` is not a list).

    python -m tests.fakes.bare_server
"""

from __future__ import annotations

import json
import sys
from typing import Any

REVISION = "2026-07-28"
TOOLS = [{"name": name, "description": what, "inputSchema": {"type": "object"}}
         for name, what in (("plain", "Answers without a resultType."),
                            ("broken", "Answers with content that is not a list."))]
CALLS: dict[str, dict[str, Any]] = {
    "plain": {"content": [{"type": "text", "text": "plain answer"}]},
    "broken": {"resultType": "complete", "content": "not a list"}}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    complete = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    if method == "server/discover":
        return {**complete, "supportedVersions": [REVISION], "capabilities": {"tools": {}},
                "serverInfo": {"name": "bare", "version": "1.0.0"}}
    if method == "tools/list":
        return {**complete, "tools": TOOLS}
    if method == "tools/call":
        return CALLS.get(params.get("name", ""))
    return None


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or a client's answer
        result = answer(message["method"], message.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"no {message['method']} here"}
        else:
            reply["result"] = result
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
