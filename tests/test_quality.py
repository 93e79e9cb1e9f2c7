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
    ("tests.bench.bench_builtin_files", ["--files", "500", "--rounds", "1", "--calls", "5"],
     "round trip ratio hub/direct"),
    ("tests.bench.bench_hooks", ["--runs", "10"], "added by tui-agent"),
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


@pytest.mark.slow
def test_the_first_frame_bench_times_a_non_editable_install(tmp_path: Path) -> None:
    """``pip install .`` (not ``-e``) puts ``themes/`` inside the package as
    ``tui_agent.themes``; the checkout has no such folder. The bench times tui-agent as
    installed: its launches must not get this checkout on ``PYTHONPATH``, which would
    shadow the install (no themes: the app would not start). A venv of its own gets the
    package (no dependencies: those are read from this venv's site-packages)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()
    ours = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig."
                           "get_paths()['purelib'])"], capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()
    (Path(site) / "deps-of-the-suite.pth").write_text(ours + "\n")  # after its own
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "-q", str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    where = subprocess.run([str(venv / "bin" / "tui-agent"), "--version"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert where.returncode == 0 and where.stdout.startswith("tui-agent"), where.stderr
    out = run(str(python), "-m", "tests.bench.bench_frame", "--rounds", "1", "--paths",
              "welcome")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ratio ours/bare (welcome" in out.stdout
