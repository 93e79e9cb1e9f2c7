"""When to try again: the delay before a server's next start (exponential, capped,
jittered) and one more try of a request that is safe to repeat."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

BACKOFF_CAP = 30.0


def backoff_delay(attempt: int, base: float) -> float:
    """``base x 2^(attempt-1)`` capped at 30 s, with +-20 % jitter so that servers which
    failed together do not retry together."""
    delay: float = min(BACKOFF_CAP, base * 2.0 ** max(0, attempt - 1))
    return delay * random.uniform(0.8, 1.2)


async def retry_once(fetch: Callable[[], Awaitable[Any]]) -> Any:
    """A listing is safe to repeat: try once more if the first try failed in transit."""
    try:
        return await fetch()
    except Exception:
        return await fetch()
