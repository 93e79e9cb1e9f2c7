"""A TCP relay on a loopback port to another, in a thread: an authorization server that
lives on a port of its own (the OAuth fake's ``--authority-port``) and can go down while
the MCP server stays up (close the relay).

    with relay(authority_port, server_port):
        ...  # the authorization server answers
    # here it is down: nothing listens on authority_port
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def relay(port: int, to: int) -> Iterator[None]:
    """Relay connections to ``127.0.0.1:port`` on to ``127.0.0.1:to`` until the block ends
    (then every connection is cut, and nothing listens)."""
    listener = socket.create_server(("127.0.0.1", port))
    held: list[socket.socket] = [listener]

    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                near, _ = listener.accept()
                far = socket.create_connection(("127.0.0.1", to))
                held.extend((near, far))
                for a, b in ((near, far), (far, near)):
                    threading.Thread(target=pump, args=(a, b), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield
    finally:
        for sock in held:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
