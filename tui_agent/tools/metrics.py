"""Per-server and per-tool call metrics: calls, errors, timeouts, p50/p95 latency,
bytes returned; the hub adds each server's restarts and circuit-breaker trips.

Kept in memory for the session (latencies: the last ``KEEP`` calls of each tool), and
written as JSON beside the session file (``<id>.metrics.json``) so ``tui-agent
servers --stats`` can show them after the run.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui_agent.config.atomic import write_text
from tui_agent.tools.wording import counted

Kind = Literal["ok", "error", "timeout"]
KEEP = 10_000
"""Latencies kept per tool for the percentiles (the counts are exact)."""


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) by nearest rank, or None with no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q * len(ordered))))
    return ordered[rank - 1]


@dataclass
class CallStats:
    calls: int = 0
    errors: int = 0
    """Calls that ended in an error: the server's, the tool's own, or a timeout."""
    timeouts: int = 0
    bytes: int = 0
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=KEEP))

    def record(self, seconds: float, kind: Kind, size: int) -> None:
        self.calls += 1
        self.errors += kind != "ok"
        self.timeouts += kind == "timeout"
        self.bytes += size
        self.latencies.append(seconds)

    def merge(self, other: CallStats) -> None:
        self.calls += other.calls
        self.errors += other.errors
        self.timeouts += other.timeouts
        self.bytes += other.bytes
        self.latencies.extend(other.latencies)

    def as_dict(self) -> dict[str, Any]:
        values = list(self.latencies)
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        return {"calls": self.calls, "errors": self.errors, "timeouts": self.timeouts,
                "bytes": self.bytes,
                "p50_ms": None if p50 is None else round(p50 * 1000, 1),
                "p95_ms": None if p95 is None else round(p95 * 1000, 1)}


class Metrics:
    """Every tool call the hub made, by server and tool."""

    def __init__(self) -> None:
        self.tools: dict[str, dict[str, CallStats]] = {}

    def record(self, server: str, tool: str, seconds: float, kind: Kind, size: int) -> None:
        self.tools.setdefault(server, {}).setdefault(tool, CallStats()).record(
            seconds, kind, size)

    def server(self, server: str) -> CallStats:
        """All calls of one server's tools together."""
        total = CallStats(latencies=deque(maxlen=None))
        for stats in self.tools.get(server, {}).values():
            total.merge(stats)
        return total

    def report(self, servers: dict[str, dict[str, int]]) -> dict[str, Any]:
        """JSON for every server in ``servers`` (name -> ``restarts``, ``breaker_trips``)
        and every server that was called."""
        out: dict[str, Any] = {}
        for name in [*servers, *(n for n in self.tools if n not in servers)]:
            out[name] = {**self.server(name).as_dict(), **servers.get(name, {}),
                         "tools": {tool: stats.as_dict()
                                   for tool, stats in sorted(self.tools.get(name, {}).items())}}
        return {"servers": out}


def metrics_path(session_file: Path) -> Path:
    """Where a session's metrics are kept: beside its JSONL file."""
    return session_file.with_name(session_file.name.removesuffix(".jsonl") + ".metrics.json")


def write_report(session_file: Path, report: dict[str, Any]) -> None:
    """Write ``report`` beside the session, atomically."""
    write_text(metrics_path(session_file), json.dumps(report, indent=1) + "\n")


def format_bytes(size: int) -> str:
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def summary(stats: dict[str, Any]) -> str:
    """One line for a server's or a tool's stats."""
    parts = [counted(stats["calls"], "call"), counted(stats["errors"], "error"),
             counted(stats["timeouts"], "timeout")]
    if stats.get("p50_ms") is not None:
        parts.append(f"p50 {stats['p50_ms']:g} ms · p95 {stats['p95_ms']:g} ms")
    parts.append(format_bytes(int(stats["bytes"])))
    if "restarts" in stats:
        parts += [counted(stats["restarts"], "restart"),
                  counted(stats["breaker_trips"], "retry pause")]  # the breaker opened
    return " · ".join(parts)
