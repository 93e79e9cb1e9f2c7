"""The HTTP plumbing the provider fakes share (Anthropic, Gemini, Ollama).

Each fake (:mod:`tests.fakes.anthropic_server`, :mod:`tests.fakes.gemini_server`,
:mod:`tests.fakes.ollama_server`) is a :class:`ScriptedServer`: a threaded HTTP server on
127.0.0.1 with an ephemeral port, used as a context manager, that takes its scripted
replies in order and records every request it receives (:class:`Recorded`). This module
owns only that: starting and stopping, the script, the record, and writing a JSON body or
a streamed body (chunked transfer encoding, one ``write`` per event). What a request must
look like and what a reply says is each fake's own business (its ``handle`` method), so
the provider's rules live beside its wire format. The OpenAI-format fake
(:mod:`tests.fakes.llm_server`) predates this module and stands alone.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar
from urllib.parse import parse_qs, urlsplit

R = TypeVar("R")


@dataclass(frozen=True)
class Recorded:
    """One request as the fake received it (refused ones too)."""

    method: str
    path: str
    """The path without the query string."""
    query: dict[str, str]
    headers: dict[str, str]
    """Header names in lower case."""
    body: dict[str, Any]


class _QuietServer(ThreadingHTTPServer):
    """Clients that drop keep-alive connections are normal here: no tracebacks."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        return


class Exchange:
    """One request being answered: what came in, and the ways to answer it."""

    def __init__(self, handler: BaseHTTPRequestHandler, record: Recorded) -> None:
        self._handler = handler
        self.request = record

    def json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """Answer with a whole JSON body."""
        data = json.dumps(payload).encode()
        h = self._handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(data)

    def stream(self, content_type: str, pieces: Iterable[bytes]) -> None:
        """Answer 200 with a chunked body, one chunk per piece, flushed as it goes."""
        h = self._handler
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        try:
            for piece in pieces:
                h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                h.wfile.flush()
            h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True


class ScriptedServer(Generic[R]):
    """A fake provider. Subclasses implement :meth:`handle`; ``R`` is their reply type."""

    name = "fake-provider"

    def __init__(self, replies: Iterable[R] = ()) -> None:
        self._script: deque[R] = deque(replies)
        self.repeat: R | None = None
        """Served whenever the script is empty (benchmarks, long conversations); None
        answers the fake's "script exhausted" error instead."""
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        """Every request, in the order received, refused ones too."""
        self.secret = os.urandom(16)
        """Signs what the fake hands out and wants back verbatim (signatures)."""
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.02}, name=self.name,
                                        daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (each fake's ``base_url`` says what litellm wants)."""
        return f"http://127.0.0.1:{self.port}"

    def push(self, *replies: R) -> None:
        """Add replies to the end of the script."""
        with self._lock:
            self._script.extend(replies)

    def pending(self) -> int:
        """How many scripted replies are still unasked for."""
        with self._lock:
            return len(self._script)

    def next_reply(self) -> R | None:
        """The next scripted reply, else :attr:`repeat` (None: the script is exhausted)."""
        with self._lock:
            return self._script.popleft() if self._script else self.repeat

    def sign(self, text: str) -> str:
        """An opaque signature of ``text`` only this fake can make (HMAC-SHA256, base64)."""
        digest = hmac.new(self.secret, text.encode(), hashlib.sha256).digest()
        return base64.b64encode(digest).decode()

    def verify(self, text: str, signature: object) -> bool:
        return isinstance(signature, str) and hmac.compare_digest(self.sign(text), signature)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, exchange: Exchange) -> None:
        """Answer one request (every method and path comes here)."""
        raise NotImplementedError

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # keep test output clean

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_unparsed": raw.decode(errors="replace")}
                url = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                record = Recorded(self.command, url.path, query,
                                  {k.lower(): v for k, v in self.headers.items()},
                                  body if isinstance(body, dict) else {"_body": body})
                with fake._lock:
                    fake.requests.append(record)
                fake.handle(Exchange(self, record))

            do_GET = do_POST = _any  # noqa: N815

        return Handler
