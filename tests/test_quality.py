"""The checks the project holds itself to run with the suite: ruff, mypy --strict, and the
benchmarks still run and print their figures (they assert nothing about speed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import need
from tests.zygote import module

ROOT = Path(__file__).resolve().parents[1]


def run(*cmd: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    out = run(ruff, "check", ".")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_is_clean() -> None:
    out = run(sys.executable, "-m", "mypy")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success" in out.stdout


@pytest.mark.parametrize(("bench", "args", "expect"), [
    ("tests.bench.bench_stream", ["--tokens", "200", "--rounds", "1"], "ratio ours/direct"),
    ("tests.bench.bench_startup", ["--rounds", "1", "--no-warm"], "run minus bare import"),
    ("tests.bench.bench_hub", ["--calls", "20", "--servers", "3"], "call ratio hub/raw"),
    ("tests.bench.bench_codemode", ["--calls", "10", "--rounds", "1"], "ratio script/direct"),
    ("tests.bench.bench_tui", ["--rounds", "1", "--tokens", "120", "--messages", "60"],
     "ratio full/empty"),
    ("tests.bench.bench_cache", ["--turns", "3"], "(target >= 80%)"),
    ("tests.bench.bench_frame", ["--rounds", "1"], "ratio ours/bare (model"),
])
def test_benchmarks_run_and_print_figures(bench: str, args: list[str], expect: str) -> None:
    # Through the worker's zygote: each bench would otherwise spend ~4 s of CPU importing
    # litellm and the MCP SDK before its first figure. What a bench times starts after
    # its imports (bench_startup and bench_tui time fresh processes they start themselves).
    out = run(*module(bench, *args))
    assert out.returncode == 0, out.stderr
    assert expect in out.stdout


def test_the_first_frame_bench_runs_in_tmux() -> None:
    """``bench_frame --tmux`` times both paths in a tmux pane, where most people who live
    in a terminal run the app (TERM=screen); .ci/run installs tmux."""
    need(shutil.which("tmux") is not None, "tmux")
    out = run(*module("tests.bench.bench_frame", "--rounds", "1", "--tmux"))
    assert out.returncode == 0, out.stderr
    assert "in a tmux pane (TERM=screen)" in out.stdout
    assert "ratio ours/bare (welcome" in out.stdout
    assert "ratio ours/bare (model" in out.stdout
