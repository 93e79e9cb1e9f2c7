"""A loopback TCP listener that keeps every byte it is sent: where something must not
connect (an untrusted project's model endpoint), it proves nothing did, at the socket,
whatever path or protocol the client would have used.

Each connection is read until the client has sent a whole HTTP request head (or stops
sending for a moment) and is answered ``503`` and closed, so a client that does connect
fails at once instead of waiting for an answer.

    with Recorder() as rec:
        ...  # point something at rec.url
    assert rec.connections == 0 and rec.received == b""
"""

from __future__ import annotations

import contextlib
import socket
import threading

_BODY = b'{"error": {"message": "the recorder answers nothing"}}'
ANSWER = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
          b"Content-Length: " + str(len(_BODY)).encode() + b"\r\nConnection: close\r\n\r\n"
          + _BODY)


class Recorder:
    """The listener, in a daemon thread, until :meth:`stop` (or the ``with`` block ends)."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._lock = threading.Lock()
        self._data: list[bytes] = []
        self.connections = 0
        """Connections accepted so far."""

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def received(self) -> bytes:
        """Every byte every connection sent, in the order they were read."""
        with self._lock:
            return b"".join(self._data)

    def _take(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(2.0)
            got = b""
            while chunk := conn.recv(65536):
                got += chunk
                with self._lock:
                    self._data.append(chunk)
                head, sep, rest = got.partition(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                if sep and len(rest) >= length:
                    break
            conn.sendall(ANSWER)

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._listener.accept()
                with self._lock:
                    self.connections += 1
                threading.Thread(target=self._take, args=(conn,), daemon=True).start()

    def start(self) -> Recorder:
        threading.Thread(target=self._serve, name="recorder", daemon=True).start()
        return self

    def stop(self) -> None:
        self._listener.close()

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
