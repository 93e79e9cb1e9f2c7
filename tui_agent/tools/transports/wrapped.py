"""The read and write streams of a transport, passed through a wrapper that changes one
thing (:class:`~tui_agent.tools.transports.sdk.WatchedRead` notices the end and lets a
result go; :mod:`.complete` fills in ``resultType``). Everything a wrapper does not
override goes to the stream inside, so the SDK sees the stream it expects."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self


class Wrapped:
    """A stream passed through (see the module)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


class WrappedRead(Wrapped):
    """A read stream passed through; ``async for`` reads through :meth:`receive`, so a
    subclass's ``receive`` sees every message."""

    async def receive(self) -> Any:
        return await self._inner.receive()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
