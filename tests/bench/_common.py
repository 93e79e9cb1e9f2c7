"""Shared by the benchmarks: a fake LLM in its own process (so it does not share our GIL),
and plain statistics. Benchmarks print figures; they assert nothing about speed."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@contextmanager
def fake_server(tokens: int) -> Iterator[str]:
    """Start ``tests.fakes.llm_server`` in a subprocess; yield its base URL."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakes.llm_server", "--tokens",
                             str(tokens)], stdout=subprocess.PIPE, text=True, env=env())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        yield line.split()[3]  # "fake LLM at URL (model ...)"
    finally:
        proc.terminate()
        proc.wait(10)


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(values: list[float], scale: float = 1.0) -> str:
    """min / median / max, each times ``scale`` (1000 for seconds shown as ms)."""
    digits = 3 if scale == 1.0 else 1
    low, mid, high = (v * scale for v in (min(values), median(values), max(values)))
    return f"min {low:.{digits}f} / median {mid:.{digits}f} / max {high:.{digits}f}"
