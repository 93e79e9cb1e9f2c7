"""Peak memory of big tool results, against an idle run in the same bench.

A real MCP server (``tests/fakes/mcp_server.py`` over stdio, its ``big`` tool returning
``--mb`` megabytes of text) is called ``--calls`` times by the scripted model
(``tests/fakes/llm_server.py``): once as one code-mode script that calls it in a loop
(``code``), and once as that many tool calls in one reply (``plain``). Each runs through
``tui-agent run`` in a subprocess, alternating with the same command whose tool returns
a few bytes (the idle figure). The agent process's own peak (``VmHWM``, read as it
ends) and the peaks of its children (the Starlark script's process and the MCP server,
sampled from ``/proc`` while they live) are printed, with

    ratio = (agent peak - idle agent peak) / largest result       (target: <= 3)

    python -m tests.bench.bench_memory [--mb 7] [--calls 9] [--rounds 3] [--mode code|plain|both]

Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.bench._common import ROOT, env, median
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply

MB = 1 << 20
IDLE_SIZE = 16
"""Characters of a result in the idle run: the same calls, next to no data."""
WRAP = """\
import json, os, resource, sys
from tui_agent.cli import main
code = main(sys.argv[1:])
with open("/proc/self/status") as status:
    hwm = next(int(row.split()[1]) for row in status if row.startswith("VmHWM:"))
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open(os.environ["BENCH_MEMORY_REPORT"], "w") as out:
    json.dump({"agent": hwm, "children": children}, out)
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
"""
"""``tui-agent run`` as its console script runs it (``main``, then a fast exit), with the
process's own peak written down before the exit."""


def script(calls: int, size: int) -> str:
    """A script that keeps only the length of each result (as a model would summarise)."""
    return (f"total = 0\nfor i in range({calls}):\n"
            f"    text = calc.big(size={size})\n    total += len(text)\nresult = total\n")


def replies(mode: str, calls: int, size: int) -> list[Reply]:
    if mode == "code":
        first = Reply(tool_calls=[FakeToolCall("executeToolCode",
                                               {"code": script(calls, size)}, id="s1")])
    else:
        first = Reply(tool_calls=[FakeToolCall("calc__big", {"size": size}, id=f"b{n}")
                                  for n in range(calls)])
    return [first, Reply(text="done")]


class Sampler(threading.Thread):
    """The peak (VmHWM, kB) of every child of ``pid`` while it lives, by command."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peaks: dict[int, tuple[str, int]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text()
            except OSError:
                children = ""
            for pid in {*map(int, children.split()), *self.peaks}:
                self._sample(pid)
            time.sleep(0.002)

    def _sample(self, pid: int) -> None:
        # The command line is read before and after: a child between its fork and its
        # exec still shows the parent's memory, and a zombie shows none.
        try:
            before = Path(f"/proc/{pid}/cmdline").read_bytes()
            status = Path(f"/proc/{pid}/status").read_text()
            after = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return
        cmd = after.replace(b"\0", b" ").decode(errors="replace")
        name = "script" if "child.py" in cmd else "mcp server" if "mcp_server" in cmd \
            else None
        hwm = next((int(r.split()[1]) for r in status.splitlines()
                    if r.startswith("VmHWM:")), 0)
        if before == after and name is not None:
            self.peaks[pid] = (name, max(hwm, self.peaks.get(pid, ("", 0))[1]))


def run_once(llm: FakeLLM, mode: str, calls: int, size: int, tmp: Path) -> dict[str, Any]:
    """One ``tui-agent run``; the agent's peak and its children's, in MB."""
    llm.push(*replies(mode, calls, size))
    config = tmp / "c.toml"
    config.write_text(
        "[servers.calc]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "tests.fakes.mcp_server"]\n'
        f"cwd = {json.dumps(str(ROOT))}\n"
        'env = {PYTHONPATH = ' + json.dumps(str(ROOT)) + "}\n", encoding="utf-8")
    report = tmp / "report.json"
    home = tmp / "home"
    run_env = {**env(), "BENCH_MEMORY_REPORT": str(report),
               **{var: str(home / sub) for var, sub in (
                   ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                   ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache"))}}
    argv = [sys.executable, "-c", WRAP, "run", "--config", str(config), "--model",
            "openai/fake-model", "--api-base", llm.base_url, "--approve", "auto",
            *(["--code-mode"] if mode == "code" else []), "go"]
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=run_env, cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    sampler = Sampler(proc.pid)
    sampler.start()
    out, err = proc.communicate(timeout=600)
    sampler.stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"tui-agent run failed ({proc.returncode}):\n{err.decode()[-3000:]}")
    took = time.monotonic() - started
    figures = json.loads(report.read_text())
    peaks: dict[str, float] = {}
    for name, kb in sampler.peaks.values():
        peaks[name] = max(peaks.get(name, 0.0), kb / 1024)
    return {"agent": figures["agent"] / 1024, "children": figures["children"] / 1024,
            "peaks": peaks, "seconds": took, "stdout": out.decode()}


def bench(mode: str, mb: float, calls: int, rounds: int) -> None:
    size = int(mb * MB)
    idle: list[dict[str, Any]] = []
    busy: list[dict[str, Any]] = []
    with FakeLLM() as llm, tempfile.TemporaryDirectory() as tmp:
        for n in range(rounds):
            for kind, chars, into in (("idle", IDLE_SIZE, idle), ("big", size, busy)):
                where = Path(tmp) / f"{mode}-{kind}-{n}"
                where.mkdir()
                into.append(run_once(llm, mode, calls, chars, where))
    agent_idle = median([r["agent"] for r in idle])
    agent_peak = median([r["agent"] for r in busy])
    largest = size / MB
    print(f"{mode}: {calls} results of {largest:g} MB "
          f"({'one code-mode script' if mode == 'code' else 'one reply of tool calls'}), "
          f"median of {rounds} round(s)")
    print(f"   agent process: idle {agent_idle:.1f} MB, peak {agent_peak:.1f} MB, "
          f"peak - idle {agent_peak - agent_idle:.1f} MB, largest result {largest:g} MB, "
          f"ratio {(agent_peak - agent_idle) / largest:.2f} (target <= 3)")
    names = sorted({name for r in idle + busy for name in r["peaks"]})
    for name in names:
        low = median([r["peaks"].get(name, 0.0) for r in idle])
        high = median([r["peaks"].get(name, 0.0) for r in busy])
        print(f"   {name} process: idle {low:.1f} MB, peak {high:.1f} MB, "
              f"peak - idle {high - low:.1f} MB")
    print(f"   wall time: idle {median([r['seconds'] for r in idle]):.2f} s, "
          f"big {median([r['seconds'] for r in busy]):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=7.0)
    parser.add_argument("--calls", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", choices=("code", "plain", "both"), default="both")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for mode in ("code", "plain") if args.mode == "both" else (args.mode,):
        bench(mode, args.mb, args.calls, args.rounds)


if __name__ == "__main__":
    main()
