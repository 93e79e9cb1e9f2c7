"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

Tests drive the real litellm client against it, so SSE parsing, tool-call
deltas, usage chunks, retries and error mapping all run for real. Each request
to ``/v1/chat/completions`` takes the next :class:`Reply` from the script; an
exhausted script answers 500 with a message that says so, so a test that asks
for more turns than it scripted fails loudly instead of hanging.

Run it by hand (``python -m tests.fakes.llm_server --text "hello"``) to point a
real ``tui-agent`` at it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeToolCall:
    """One tool call the fake model asks for; arguments arrive in ``split`` fragments."""

    name: str
    arguments: str | dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    split: int = 3

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer.

    ``status`` other than 200 answers with an OpenAI-style error body. ``cut_after``
    sends that many chunks and then drops the connection mid-body (no finish
    chunk, no ``[DONE]``); with ``cut_clean`` the body is close-delimited, so the
    cut looks like a normal end of body at the HTTP level. ``hang`` sends the
    headers and then nothing until the server stops. ``delay`` is slept before
    every chunk.
    """

    text: str = ""
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    chunk_chars: int = 4
    delay: float = 0.0
    status: int = 200
    error_message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    cut_clean: bool = False
    hang: bool = False
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    error_body: str | None = None
    """With a ``status`` other than 200: the body sent verbatim as ``text/html`` instead of
    the JSON error (what a proxy's or load balancer's error page looks like)."""
    reasoning: str = ""
    """Streamed first, as ``delta.reasoning_content`` (DeepSeek's, vLLM's and litellm's
    own field for a model's thinking), in pieces of ``chunk_chars``."""


def _chunks(reply: Reply, model: str) -> list[dict[str, Any]]:
    """The SSE payloads for one reply, in order, without the final ``[DONE]``."""
    base: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                            "created": int(time.time()), "model": model}
    out: list[dict[str, Any]] = []

    def add(delta: dict[str, Any], finish: str | None = None) -> None:
        out.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    add({"role": "assistant", "content": ""})
    for i in range(0, len(reply.reasoning), max(1, reply.chunk_chars)):
        add({"reasoning_content": reply.reasoning[i:i + reply.chunk_chars]})
    text = reply.text
    for i in range(0, len(text), max(1, reply.chunk_chars)):
        add({"content": text[i:i + reply.chunk_chars]})
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_{index}_{call.name}"[:40]
        add({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                             "function": {"name": call.name, "arguments": ""}}]})
        args = call.arguments_text()
        step = max(1, -(-len(args) // max(1, call.split)))
        for j in range(0, len(args), step):
            add({"tool_calls": [{"index": index, "function": {"arguments": args[j:j + step]}}]})
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    add({}, finish)
    usage = reply.usage or {"prompt_tokens": 10, "completion_tokens": max(1, len(text) // 4),
                            "total_tokens": 10 + max(1, len(text) // 4)}
    out.append({**base, "choices": [], "usage": usage})
    return out


class _QuietServer(ThreadingHTTPServer):
    """Clients that drop keep-alive connections are normal here: no tracebacks."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        return


class FakeLLM:
    """The server. Use as a context manager; ``base_url`` is what litellm's ``api_base`` wants."""

    def __init__(self, replies: list[Reply] | None = None, model: str = "fake-model",
                 repeat: Reply | None = None, window: int | None = None) -> None:
        self.model = model
        self.repeat = repeat
        """Served whenever the script is empty (benchmarks); None answers 500 instead."""
        self.window = window
        """Like a real provider's context window: a request of more tokens (counted as
        :func:`tests.fakes.tokens.request_tokens` does) is refused with OpenAI's 400
        ``context_length_exceeded``, and a served one reports its count as its prompt
        tokens. None: no limit, and a constant 10 prompt tokens."""
        self.sizes: list[int] = []
        """With a window: the tokens of each request, refused ones too."""
        self.refused = 0
        self.summary: str | None = None
        """Served to tui-agent's compaction requests (whatever the script holds)."""
        self.summaries = 0
        self._script: deque[Reply] = deque(replies or [])
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        """The JSON body of each POST, in order: what was sent."""
        self.authorizations: list[str] = []
        """The ``Authorization`` header of each POST, in order."""
        self.paths: list[str] = []
        """The path of each POST served, in order."""
        self.chunks_sent = 0
        """Stream chunks written so far, over all streams (a test that waits on a stream
        says how far the stream got when the wait fails)."""
        self._stopping = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._serve, name="fake-llm", daemon=True)

    def _serve(self) -> None:
        self._server.serve_forever(poll_interval=0.02)  # so stop() returns at once

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def drop_pending(self) -> None:
        """Forget the replies not asked for (a turn that stopped short)."""
        with self._lock:
            self._script.clear()

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _measure(self, body: dict[str, Any]) -> int | None:
        if self.window is None:
            return None
        from tests.fakes.tokens import request_tokens

        size = request_tokens(body)
        with self._lock:
            self.sizes.append(size)
        return size

    def _next(self, body: dict[str, Any]) -> Reply | None:
        if self.summary is not None and is_compaction(body):
            with self._lock:
                self.requests.append(body)
                self.summaries += 1
            return Reply(text=self.summary, chunk_chars=64)
        with self._lock:
            self.requests.append(body)
            return self._script.popleft() if self._script else self.repeat

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # keep test output clean

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/stats"):
                    with fake._lock:
                        self._json(200, {"requests": len(fake.requests), "refused": fake.refused,
                                         "summaries": fake.summaries,
                                         "largest": max(fake.sizes, default=0)})
                elif self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": fake.model,
                                                                 "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.authorizations.append(self.headers.get("Authorization", ""))
                size = fake._measure(body)
                if size is not None and fake.window is not None and size > fake.window:
                    with fake._lock:
                        fake.requests.append(body)
                        fake.refused += 1
                    self._json(400, {"error": {
                        "message": f"This model's maximum context length is {fake.window} "
                                   f"tokens. However, your messages resulted in {size} "
                                   "tokens. Please reduce the length of the messages.",
                        "type": "invalid_request_error", "param": "messages",
                        "code": "context_length_exceeded"}})
                    return
                reply = fake._next(body)
                fake.paths.append(self.path)
                if reply is not None and size is not None and reply.usage is None:
                    reply = replace(reply, usage={
                        "prompt_tokens": size, "completion_tokens": max(1, len(reply.text) // 4),
                        "total_tokens": size + max(1, len(reply.text) // 4)})
                if reply is None:
                    self._error(500, "fake LLM script exhausted: no reply scripted", {})
                elif reply.status != 200 and reply.error_body is not None:
                    self._page(reply.status, reply.error_body)
                elif reply.status != 200:
                    self._error(reply.status, reply.error_message, reply.headers)
                elif body.get("stream"):
                    self._stream(reply, body)
                else:
                    self._whole(reply)

            def _json(self, status: int, payload: dict[str, Any],
                      headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, headers: dict[str, str]) -> None:
                self._json(status, {"error": {"message": message, "type": "fake_error",
                                              "code": str(status)}}, headers)

            def _page(self, status: int, page: str) -> None:
                data = page.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _whole(self, reply: Reply) -> None:
                message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
                if reply.tool_calls:
                    message["tool_calls"] = [
                        {"id": c.id or f"call_{i}", "type": "function",
                         "function": {"name": c.name, "arguments": c.arguments_text()}}
                        for i, c in enumerate(reply.tool_calls)]
                self._json(200, {"id": "chatcmpl-fake", "object": "chat.completion",
                                 "created": int(time.time()), "model": fake.model,
                                 "choices": [{"index": 0, "message": message,
                                              "finish_reason": "tool_calls" if reply.tool_calls
                                              else "stop"}],
                                 "usage": reply.usage or {"prompt_tokens": 10,
                                                          "completion_tokens": 5,
                                                          "total_tokens": 15}})

            def _send(self, payload: bytes, chunked: bool) -> None:
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
                else:
                    self.wfile.write(payload)
                self.wfile.flush()

            def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                chunked = not reply.cut_clean
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.flush()
                if reply.hang:
                    fake._stopping.wait(60)
                    self.close_connection = True
                    return
                chunks = _chunks(reply, fake.model)
                want_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                if not want_usage:
                    chunks = chunks[:-1]
                try:
                    for n, chunk in enumerate(chunks):
                        if reply.cut_after is not None and n >= reply.cut_after:
                            self._abort()
                            return
                        if reply.delay:
                            time.sleep(reply.delay)
                        self._send(b"data: " + json.dumps(chunk).encode() + b"\n\n", chunked)
                        with fake._lock:
                            fake.chunks_sent += 1
                    self._send(b"data: [DONE]\n\n", chunked)
                    self._send(b"", chunked)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _abort(self) -> None:
                """Drop the connection mid-body, as a proxy or a crashed provider does."""
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

        return Handler


def is_compaction(body: dict[str, Any]) -> bool:
    """Whether a request is tui-agent's compaction request (its system prompt says so)."""
    messages = body.get("messages") or [{}]
    return messages[0].get("role") == "system" and str(
        messages[0].get("content")).startswith("You are compacting")


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve one scripted reply per request.")
    parser.add_argument("--text", action="append", default=[],
                        help="a reply's text (repeat for more turns)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=0,
                        help="serve a reply of this many 4-character tokens to every request")
    parser.add_argument("--window", type=int, default=None,
                        help="refuse requests of more tokens, as a provider does")
    parser.add_argument("--summary", default=None,
                        help="the reply to tui-agent's compaction requests")
    args = parser.parse_args()
    if args.tokens:
        # Distinct 4-character tokens: litellm aborts a stream of 100 identical chunks.
        text = "".join(f"{i % 10000:04d}" for i in range(args.tokens))
        server = FakeLLM(repeat=Reply(text=text, chunk_chars=4))
    else:
        server = FakeLLM([Reply(text=t) for t in args.text]
                         or [Reply(text="Hello from the fake LLM.")])
    server.window, server.summary = args.window, args.summary
    if args.port:
        server._server.server_close()
        server._server = _QuietServer(("127.0.0.1", args.port), server._handler_class())
        server._thread = threading.Thread(target=server._serve, daemon=True)
    server.start()
    print(f"fake LLM at {server.base_url} (model openai/{server.model})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
