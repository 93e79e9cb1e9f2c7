"""The circuit breaker of one server: after ``threshold`` consecutive failures of starts
and calls, calls fail fast, and the server is probed again once per ``cooldown``."""

from __future__ import annotations

import time


class Breaker:
    """Closed (calls go through), open (they fail fast), half-open (one probe goes through)."""

    def __init__(self, threshold: int, cooldown: float) -> None:
        self.threshold, self.cooldown = threshold, cooldown
        self.failures = 0
        self.opened_at: float | None = None
        self.probing = False
        self.trips = 0
        """How many times the circuit opened."""

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        return "half-open" if self.probing or self.remaining() == 0 else "open"

    def remaining(self) -> float:
        if self.opened_at is None:
            return 0.0
        return max(0.0, self.opened_at + self.cooldown - time.monotonic())

    def allow(self) -> bool:
        if self.opened_at is None:
            return True
        if self.probing or self.remaining() > 0:
            return False
        self.probing = True
        return True

    def success(self) -> None:
        """A call or start worked (also: the user asked to retry now): close the circuit."""
        self.failures, self.opened_at, self.probing = 0, None, False

    def failure(self) -> None:
        self.failures += 1
        if self.probing or self.failures >= self.threshold:
            if self.opened_at is None or self.probing:
                self.trips += 1
            self.opened_at, self.probing = time.monotonic(), False
