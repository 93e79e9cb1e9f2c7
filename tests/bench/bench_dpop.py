"""What DPoP costs a call: signing one proof, per algorithm, and a tool call through the hub
against the OAuth fake with its DPoP guard (tests/fakes/dpop_guard.py, which also checks
every proof), DPoP on against ``dpop = "off"`` (Bearer) on the same server.

Printed: microseconds a proof (min / median / max), milliseconds a call each way and the
ratio. Figures only; nothing is asserted.

    python -m tests.bench.bench_dpop [--calls 200] [--proofs 500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Literal

from tests.bench._common import ROOT, median, spread


def proofs(count: int) -> None:
    from tui_agent.tools.auth.dpop import DpopKey

    for alg in ("ES256", "EdDSA", "RS256"):
        key = DpopKey.generate(alg)
        took = []
        for _ in range(count):
            start = time.perf_counter()
            key.proof("POST", "https://mcp.example.com/mcp", access_token="t" * 40)
            took.append(time.perf_counter() - start)
        print(f"proof {alg:6} µs: {spread(took, 1e6)}")


async def calls(url: str, state: Path, count: int, dpop: Literal["auto", "off"]
                ) -> list[float]:
    from tui_agent.config.models import ServerConfig
    from tui_agent.config.oauth import OAuthSettings
    from tui_agent.tools.auth.providers import provider
    from tui_agent.tools.auth.storage import FileVault, TokenStore
    from tui_agent.tools.client import ClientSide
    from tui_agent.tools.hub import Hub

    def browse(link: str) -> None:
        threading.Thread(target=lambda: urllib.request.urlopen(link, timeout=15).read(),
                         daemon=True).start()

    store = TokenStore(FileVault(state / f"tokens-{dpop}.json"))
    auth = provider(url, OAuthSettings(dpop=dpop), store, open_url=browse, name="guarded")
    config = ServerConfig(url=url, transport="http", startup_timeout=25)
    took: list[float] = []
    async with Hub({"guarded": config}, log_dir=state / "logs",
                   client_side=lambda name, cfg: ClientSide(auth=auth)) as hub:
        await hub.wait_all()
        whoami = next(s for s in hub.specs() if s.tool == "whoami")
        for _ in range(count):
            start = time.perf_counter()
            outcome = await hub.call(whoami, {})
            took.append(time.perf_counter() - start)
            assert not outcome.is_error, outcome.text
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--proofs", type=int, default=500)
    args = parser.parse_args()
    proofs(args.proofs)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("TUI_AGENT_TEST_TAG", "bench-dpop")
    from tests.reference import free_port, http_server

    port = free_port()
    command = [sys.executable, "-m", "tests.fakes.oauth_server", "--port", str(port),
               "--dpop", "ES256"]
    with tempfile.TemporaryDirectory() as state, \
            http_server(command, port, {"PYTHONPATH": str(ROOT)}, "/mcp") as url:
        bearer = asyncio.run(calls(url, Path(state), args.calls, "off"))
        dpop = asyncio.run(calls(url, Path(state), args.calls, "auto"))
    print(f"call, Bearer ms: {spread(bearer, 1e3)}")
    print(f"call, DPoP ms:   {spread(dpop, 1e3)}")
    print(f"call ratio DPoP/Bearer (median): {median(dpop) / median(bearer):.2f}")


if __name__ == "__main__":
    main()
