"""Our own start-up cost: ``tui-agent run`` wall time minus bare ``import litellm``.

Both are measured in the same run, interleaved, as fresh processes. The run is
a whole headless turn (a one-word reply from a fake server in its own process),
so the difference is everything of ours: argument parsing, config, session
file, the request and its stream.

    python -m tests.bench.bench_startup [--rounds 5] [--no-warm]

Target (issue 2): under 0.5 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

from tests.bench._common import env, fake_server, median, spread

ONE_REQUEST = """
import asyncio, sys
import litellm
litellm.suppress_debug_info = True
litellm.disable_token_counter = True
async def go():
    r = await litellm.acompletion(model="openai/fake-model", api_base=sys.argv[1], api_key="k",
                                  messages=[{"role": "user", "content": "hi"}], stream=True,
                                  stream_options={"include_usage": True}, num_retries=0)
    async for chunk in r:
        pass
asyncio.run(go())
"""


def timed(cmd: list[str], environ: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, env=environ, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(rounds: int, warm: bool = True) -> dict[str, float]:
    with fake_server(1) as url, tempfile.TemporaryDirectory() as home:
        environ = {**env(), "XDG_DATA_HOME": home, "XDG_CONFIG_HOME": home}
        commands = {
            "python -c 'import litellm'": [sys.executable, "-c", "import litellm"],
            "import litellm + 1 request": [sys.executable, "-c", ONE_REQUEST, url],
            "tui-agent run (whole turn)": [sys.executable, "-m", "tui_agent", "run", "--model",
                                           "openai/fake-model", "--api-base", url, "hi"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for cmd in commands.values() if warm else ():
            timed(cmd, environ)  # warm the page cache
        for i in range(rounds):
            names = list(commands) if i % 2 == 0 else list(reversed(commands))
            for name in names:
                times[name].append(timed(commands[name], environ))
    print(f"start-up, {rounds} fresh processes each, interleaved")
    for name, values in times.items():
        print(f"  {name:28}: {spread(values)} s")
    bare, request, run = (median(v) for v in times.values())
    print(f"  run minus bare import       : {run - bare:+.3f} s (medians; target under 0.5 s)")
    print(f"  run minus bare import+request: {run - request:+.3f} s (our own share)")
    return {"import": bare, "request": request, "run": run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-warm", action="store_true",
                        help="skip the round that warms the page cache (the suite's smoke run)")
    args = parser.parse_args()
    measure(args.rounds, warm=not args.no_warm)


if __name__ == "__main__":
    main()
