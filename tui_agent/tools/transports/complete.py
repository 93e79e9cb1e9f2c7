"""A result that says no ``resultType`` is complete. The 2026-07-28 protocol (SEP-2322,
multi-round-trip requests) says so: a client MUST take an absent ``resultType`` as
``"complete"``. The ``mcp`` SDK (2.3.0) instead checks a 2026-07-28 result against a schema
that requires the field, and a server that leaves it out (as servers written before the
revision do) fails the call with a pydantic ``ValidationError``.

So every transport's streams are wrapped here: the write side notes which method each of
our requests is, and the read side fills in ``"resultType": "complete"`` on a response to
a method the 2026-07-28 revision has a result for, before the SDK sees it. On a 2025
session the SDK drops the field again, as one of a later revision's (its
``_later_revision_fields``); methods 2026-07-28 does not have (``initialize``, ``ping``)
are left as they came.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

from tui_agent.tools.transports.wrapped import Wrapped, WrappedRead

REVISION = "2026-07-28"


def _has_result_type(method: str) -> bool:
    from mcp_types.methods import SERVER_RESULTS

    return (method, REVISION) in SERVER_RESULTS


class CompleteByDefault(AbstractAsyncContextManager[Any]):
    """``inner`` (a transport yielding its read and write streams), with the defaulting
    the module describes."""

    def __init__(self, inner: AbstractAsyncContextManager[Any]) -> None:
        self._inner = inner
        self.pending: dict[Any, str] = {}
        """Request id -> method, for our requests not answered yet."""

    async def __aenter__(self) -> Any:
        read, write = await self._inner.__aenter__()
        return _Read(read, self.pending), _Write(write, self.pending)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)

    def __getattr__(self, name: str) -> Any:  # what else the transport offers (its pid)
        return getattr(self._inner, name)


class _Write(Wrapped):
    def __init__(self, inner: Any, pending: dict[Any, str]) -> None:
        super().__init__(inner)
        self._pending = pending

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", None)
        method = getattr(message, "method", None)
        if method is not None and getattr(message, "id", None) is not None \
                and _has_result_type(method):
            self._pending[message.id] = method  # type: ignore[union-attr]
        await self._inner.send(item)


class _Read(WrappedRead):
    def __init__(self, inner: Any, pending: dict[Any, str]) -> None:
        super().__init__(inner)
        self._pending = pending

    async def receive(self) -> Any:
        item = await self._inner.receive()
        message = getattr(item, "message", None)
        result = getattr(message, "result", None)
        if getattr(message, "method", None) is None and getattr(message, "id", None) is not None:
            method = self._pending.pop(message.id, None)  # type: ignore[union-attr]
            if method is not None and isinstance(result, dict) and "resultType" not in result:
                result["resultType"] = "complete"
        return item
