"""The messages between the SDK's connection and stdio: what SDK 0.12.1 does not route of
stable ACP v1 is answered here, before its router would say "method not found".

- ``$/cancel_request`` (a notification naming a request id): the request's work is
  cancelled and the request answers -32800 (Request cancelled), or, for a prompt, its own
  ``cancelled`` stop reason, as the cancellation page allows (the agent's
  ``cancel_request``, :mod:`.agent`).
- ``session/delete``: the SDK has its types but no route; it is answered here by the
  agent's ``delete_session``.

What must follow a response (the updates of a session ``session/new`` names: a client
drops those of a session it does not know yet) waits for it with :meth:`Wire.after`.

Each request's id is told to the work it starts (:data:`REQUEST_ID`, a context variable
the SDK's task for the request inherits: that task is created right after the message is
received, in the receive loop's context), so a handler can register itself under it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp import RequestError

log = logging.getLogger(__name__)

REQUEST_ID: contextvars.ContextVar[Any] = contextvars.ContextVar("acp_request_id",
                                                                  default=None)
"""The JSON-RPC id of the request whose handler runs (None: a notification's)."""

Handler = Callable[[dict[str, Any]], Awaitable[Any]]


class Wire:
    """The :class:`acp.Transport` the SDK's connection reads and writes through: JSON
    lines over the stdio streams (each line a JSON object already: :mod:`.serve`'s
    gatekeeper sees to that)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 cancel: Callable[[Any], None], own: dict[str, Handler]) -> None:
        self._reader, self._writer = reader, writer
        self._sending = asyncio.Lock()
        self._cancel = cancel
        """Cancels the work of a request, by its id."""
        self._own = own
        """The requests answered here, by method."""
        self._pending: set[asyncio.Task[None]] = set()
        self._after: dict[Any, list[Callable[[], object]]] = {}
        """What runs once the response to a request is written, by the request's id."""

    def after(self, request_id: Any, start: Callable[[], object]) -> None:
        """Call ``start`` once the successful response to request ``request_id`` is
        written; an error response (the request failed or was cancelled) drops it."""
        self._after.setdefault(request_id, []).append(start)

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        waiting: list[Callable[[], object]] = []
        if "method" not in message and message.get("id") in self._after:  # a response
            waiting = self._after.pop(message["id"])
        async with self._sending:
            self._writer.write(data)
            await self._writer.drain()
        if "result" in message:
            for start in waiting:
                start()

    async def close(self) -> None:
        for task in list(self._pending):
            task.cancel()
        with contextlib.suppress(Exception):  # the editor may be gone
            self._writer.close()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._reader.readline()
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:  # the gatekeeper let none through; a line cut at the end
                continue
            if not isinstance(message, dict):
                continue
            method = message.get("method")
            if method == "$/cancel_request":
                params = message.get("params")
                if isinstance(params, dict) and "requestId" in params:
                    self._cancel(params["requestId"])
                continue
            if "id" in message and method in self._own:
                self._answer(message, self._own[method])
                continue
            REQUEST_ID.set(message.get("id") if method is not None else None)
            return message

    def _answer(self, message: dict[str, Any], handler: Handler) -> None:
        """Answer a request the SDK does not route, in a task of its own (as the SDK runs
        each request), so that the next message is read meanwhile."""
        REQUEST_ID.set(message["id"])
        task = asyncio.ensure_future(self._reply(message, handler))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _reply(self, message: dict[str, Any], handler: Handler) -> None:
        from pydantic import ValidationError

        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        params = message.get("params")
        try:
            payload["result"] = await handler(params if isinstance(params, dict) else {})
        except RequestError as exc:
            payload["error"] = exc.to_error_obj()
        except ValidationError as exc:
            payload["error"] = RequestError.invalid_params(
                {"errors": exc.errors(include_url=False, include_context=False)}
            ).to_error_obj()
        except Exception as exc:  # a sentence for the editor, the traceback to the log
            log.exception("%s failed", message.get("method"))
            payload["error"] = RequestError.internal_error({"details": str(exc)}).to_error_obj()
        try:
            await self.send(payload)
        except Exception:  # the editor is gone
            log.info("could not answer %s: the connection is closed", message.get("method"))
