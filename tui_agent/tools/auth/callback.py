"""The end of a browser login: a one-shot listener on 127.0.0.1 (RFC 8252) that takes the
authorization server's redirect, checks its ``state``, answers the browser with a small
page (the login is received and the tab can be closed, or the login failed and why: the
same sentence tui-agent then reports), and closes.

Use it around one authorization request::

    async with LoopbackCallback(port) as callback:
        url = ...  # with redirect_uri=callback.redirect_uri and state=...
        result = await callback.wait(state)
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import socket
import weakref
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

from tui_agent.tools.text import clean

CALLBACK_PATH = "/callback"
PAGE = ("<!doctype html><meta charset=utf-8><title>tui-agent</title>"
        "<body style='font-family:sans-serif;margin:3em'><h1>{title}</h1><p>{body}</p>")
MAX_REQUEST = 16_384


class LoginError(Exception):
    """A login that could not finish; the message says which step and what to do."""

    plain = True
    """Already a sentence for the user (the server's status shows it as it is)."""

    refusal: tuple[str, str | None] | None = None
    """The authorization server's ``(error, error_description)``, when it refused."""


class NeedsLogin(LoginError):
    """A server asked for a login that this run cannot show."""


class Redirect:
    """What came back to the redirect URI: the code (and the RFC 9207 issuer), or the
    authorization server's error."""

    def __init__(self, query: dict[str, list[str]]) -> None:
        def one(name: str) -> str | None:
            values = query.get(name)
            return values[0] if values else None

        self.code, self.state, self.iss = one("code"), one("state"), one("iss")
        self.error, self.error_description = one("error"), one("error_description")

    def problem(self, state: str | None) -> LoginError | None:
        """Why this redirect does not finish the login that sent ``state`` (None: not
        known yet, so not checked), or None when it does."""
        if self.error:
            said = f": {self.error_description}" if self.error_description else ""
            refused = LoginError(f"the authorization server refused the login "
                                 f"({self.error}{said})")
            refused.refusal = (self.error[:80], (self.error_description or "")[:300] or None)
            return refused
        if state is not None and self.state != state:
            return LoginError("the browser came back with a different state than the login "
                              "sent (an old tab, or a forged request); log in again")
        if not self.code:
            return LoginError("the browser came back without an authorization code")
        return None


class LoopbackCallback:
    """Listens on ``127.0.0.1:port`` (0: any free port) for one redirect."""

    def __init__(self, port: int = 0, *, timeout: float = 300.0) -> None:
        self.port, self.timeout = port, timeout
        self.state: str | None = None
        """The ``state`` the login sent, once known: the page the browser gets checks it."""
        self._server: asyncio.Server | None = None
        self._arrived: asyncio.Future[Redirect] | None = None
        self._reserved: socket.socket | None = None

    @classmethod
    def on_a_free_port(cls, *, timeout: float = 300.0) -> LoopbackCallback:
        """A listener whose port is taken now, though its login may start much later: the
        redirect URI must be known before (the client registers it), and a port that was
        merely free when chosen could be another program's by the time the person logs
        in. The port is held until the first login here is over (or was not to be: no
        browser may open). Then it is let go, for a ``tui-agent login`` in another
        terminal, which finds this port registered and listens on it; a later login here
        binds it again."""
        reserved = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            # Listening already: only a listening socket keeps the port from another
            # program that binds with SO_REUSEADDR (most servers do).
            reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            reserved.bind(("127.0.0.1", 0))
            reserved.listen()
        except OSError:
            reserved.close()
            raise
        callback = cls(int(reserved.getsockname()[1]), timeout=timeout)
        callback._reserved = reserved
        weakref.finalize(callback, reserved.close)
        return callback

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackCallback:
        self._arrived = asyncio.get_running_loop().create_future()
        reserved, self._reserved = self._reserved, None
        try:
            if reserved is not None:  # closed with the server
                self._server = await asyncio.start_server(self._serve, sock=reserved)
            else:
                self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        except OSError as exc:
            raise LoginError(f"cannot listen for the login's redirect on 127.0.0.1:"
                             f"{self.port} ({exc.strerror or exc}); free the port or set "
                             "callback_port to another one (0 takes any free port)") from None
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    def cancel(self) -> bool:
        """Give up waiting (the person said so): :meth:`wait` raises :class:`LoginError`.
        False when nothing was waiting."""
        arrived = self._arrived
        if arrived is None or arrived.done() or self._server is None:
            return False

        def give_up() -> None:
            if not arrived.done():
                arrived.set_exception(LoginError("the login was cancelled"))

        arrived.get_loop().call_soon_threadsafe(give_up)
        return True

    async def wait(self, state: str) -> Redirect:
        """The redirect that carries ``state`` and a code. Raises :class:`LoginError` for a
        state that does not match, the server's own error, or no redirect in time."""
        assert self._arrived is not None, "use it as an async context manager"
        self.state = state
        try:
            async with asyncio.timeout(self.timeout):
                redirect = await self._arrived
        except TimeoutError:
            raise LoginError(f"the browser did not come back to tui-agent within "
                             f"{self.timeout:g} s; open the login link again") from None
        problem = redirect.problem(state)
        if problem is not None:
            raise problem
        return redirect

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            writer.close()
            return
        line = head[:MAX_REQUEST].split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rsplit(" ", 1)[0]
        url = urlsplit(target)
        arrived = self._arrived
        if method != "GET" or url.path != CALLBACK_PATH or arrived is None or arrived.done():
            await _answer(writer, 404, "Not here", "This is tui-agent's login listener.")
            return
        redirect = Redirect(parse_qs(url.query))
        problem = redirect.problem(self.state)
        if problem is None:
            await _answer(writer, 200, "Login received", "You can close this tab: tui-agent "
                          "finishes the login and says how it went.")
        else:
            why = clean(str(problem))
            await _answer(writer, 400, "Login failed", html.escape(
                f"{why[0].upper()}{why[1:]}. Go back to tui-agent, where it says so too."))
        arrived.set_result(redirect)


async def _answer(writer: asyncio.StreamWriter, status: int, title: str, body: str) -> None:
    page = PAGE.format(title=html.escape(title), body=body).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                 f"Content-Length: {len(page)}\r\nConnection: close\r\n\r\n".encode() + page)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()
