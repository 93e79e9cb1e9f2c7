"""A small recording stand-in for Anthropic's Messages API (``POST /v1/messages``, SSE),
for the request-building and stream-assembly tests of the model layer: it records each
request body and streams scripted replies in Anthropic's event format (thinking with its
signature, redacted thinking, text, tool_use, usage with cache counts), so litellm's own
Anthropic transformation runs both ways.

It enforces one rule of the real API, the one that broke tool turns: with thinking on, an
assistant message that calls a tool must begin with a thinking (or redacted thinking)
block that carries its signature, or the request is refused with Anthropic's 400.
The full fake (every documented rule) is tests/fakes/anthropic_server.py.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    """One scripted reply."""

    text: str = ""
    thinking: list[str] = field(default_factory=list)
    """Pieces of thinking, streamed as ``thinking_delta`` s, then ``signature``."""
    signature: str = "sig-1"
    redacted: str | None = None
    """Data of a ``redacted_thinking`` block sent before the thinking."""
    tool: tuple[str, str, dict[str, Any]] | None = None
    """(id, name, input) of a tool_use block."""
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 10})
    output_tokens: int = 5


class AnthropicStub:
    """The server; ``base_url`` is litellm's ``api_base`` for ``anthropic/...``."""

    def __init__(self, turns: list[Turn] | None = None, summary: str = "summary") -> None:
        self.turns: deque[Turn] = deque(turns or [])
        self.summary = summary
        self.bodies: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> AnthropicStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def refusal(self, body: dict[str, Any]) -> str | None:
        """Anthropic's words for a tool-calling assistant message that lost its thinking."""
        if (body.get("thinking") or {}).get("type") != "enabled":
            return None
        for message in body.get("messages", []):
            content = message.get("content")
            if message.get("role") != "assistant" or not isinstance(content, list):
                continue
            if not any(b.get("type") == "tool_use" for b in content):
                continue
            first = content[0]
            signed = first.get("type") == "redacted_thinking" or (
                first.get("type") == "thinking" and first.get("signature"))
            if not signed:
                return (f"messages: Expected `thinking` or `redacted_thinking`, but found "
                        f"`{first.get('type')}`. When `thinking` is enabled, a final "
                        "`assistant` message must start with a thinking block")
        return None

    def _events(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        system = json.dumps(body.get("system", ""))
        with self._lock:
            turn = Turn(text=self.summary) if "You are compacting" in system else (
                self.turns.popleft() if self.turns else Turn(text="(script exhausted)"))
        usage = {"input_tokens": 0, "output_tokens": 1, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, **turn.usage}
        out: list[tuple[str, dict[str, Any]]] = [("message_start", {
            "type": "message_start", "message": {
                "id": "msg_stub", "type": "message", "role": "assistant",
                "model": body.get("model"), "content": [], "stop_reason": None,
                "stop_sequence": None, "usage": usage}})]
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if turn.redacted is not None:
            blocks.append(({"type": "redacted_thinking", "data": turn.redacted}, []))
        if turn.thinking:
            blocks.append(({"type": "thinking", "thinking": ""}, [
                *({"type": "thinking_delta", "thinking": p} for p in turn.thinking),
                {"type": "signature_delta", "signature": turn.signature}]))
        if turn.text:
            blocks.append(({"type": "text", "text": ""},
                           [{"type": "text_delta", "text": turn.text}]))
        if turn.tool is not None:
            call_id, name, args = turn.tool
            blocks.append(({"type": "tool_use", "id": call_id, "name": name, "input": {}},
                           [{"type": "input_json_delta", "partial_json": json.dumps(args)}]))
        for index, (start, deltas) in enumerate(blocks):
            out.append(("content_block_start", {"type": "content_block_start",
                                                "index": index, "content_block": start}))
            out += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                             "delta": d}) for d in deltas]
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.append(("message_delta", {
            "type": "message_delta", "delta": {
                "stop_reason": "tool_use" if turn.tool else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": turn.output_tokens}}))
        out.append(("message_stop", {"type": "message_stop"}))
        return out

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub._lock:
                    stub.bodies.append(body)
                refused = stub.refusal(body)
                if refused is not None:
                    stub.refusals.append(refused)
                    data = json.dumps({"type": "error", "error": {
                        "type": "invalid_request_error", "message": refused}}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                payload = b"".join(
                    f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                    for name, data in stub._events(body))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
