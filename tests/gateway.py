"""A real LiteLLM Proxy (the team gateway) in front of the scripted OpenAI-format fake.

:func:`start_gateway` writes the proxy's YAML config (a master key, no database), starts
``litellm --config`` in a subprocess on a free loopback port, waits for its health
endpoint and hands back a :class:`Gateway`; :meth:`Gateway.stop` ends it. The proxy
serves these model names, all backed by the fake provider:

- ``alpha``: plain, its window (32,000) given in the config's ``model_info``;
- ``beta``: served as ``openai/gpt-4o`` (what litellm knows of that model);
- ``limited``: 1 request a minute (the router's usage-based routing refuses the second);
- ``spent``: a deployment budget that its first request uses up.

A callback module in the config directory records, for each request the proxy served,
the metadata litellm's logging saw (``kwargs["litellm_params"]["metadata"]``): what
the proxy's spend logs are written from.

Starting the proxy costs about 4 s on an idle machine (imports), so tests share one per
module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import TAG_VAR
from tests.fakes.llm_server import FakeLLM
from tests.reference import free_port

MASTER_KEY = "sk-gateway-master"
START_TIMEOUT = 300.0
"""Seconds the proxy gets to answer. Alone it starts in 10-20 s; in a busy round (two whole
suites at once on 2 CPUs, each test worker importing its own litellm) a first start in a
fresh venv printed nothing within 90 s, and all ten gateway tests failed at setup."""

RECORDER = '''\
"""Records the metadata of each request the proxy served, one JSON line each."""
import json
import os

from litellm.integrations.custom_logger import CustomLogger


def _plain(value):
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


class Recorder(CustomLogger):
    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        params = kwargs.get("litellm_params") or {}
        metadata = params.get("metadata") or {}
        line = {"model": kwargs.get("model"),
                "litellm_session_id": _plain(params.get("litellm_session_id")),
                "metadata": {k: _plain(v) for k, v in metadata.items()}}
        with open(os.environ["GATEWAY_RECORD"], "a") as out:
            out.write(json.dumps(line) + "\\n")


recorder = Recorder()
'''


@dataclass
class Gateway:
    """A running proxy: its URL (``api_base``), its process and what it recorded."""

    url: str
    process: subprocess.Popen[bytes]
    record: Path
    log: Path
    started_in: float
    provider: FakeLLM
    names: list[str] = field(default_factory=lambda: ["alpha", "beta", "limited", "spent"])

    def recorded(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line]

    def wait_recorded(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The records, once there are ``count`` (the proxy logs after it answers)."""
        deadline = time.monotonic() + timeout
        while len(seen := self.recorded()) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return seen

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def _config(provider: FakeLLM, extra: Sequence[dict[str, Any]] = ()) -> str:
    def model(name: str, **extra: Any) -> dict[str, Any]:
        return {"model_name": name, "litellm_params": {
            "model": f"openai/{provider.model}", "api_base": provider.base_url,
            "api_key": "sk-provider", **extra}}

    config = {
        "model_list": [{**model("alpha"), "model_info": {"max_input_tokens": 32000}},
                       {**model("beta"), "litellm_params": {
                           **model("beta")["litellm_params"], "model": "openai/gpt-4o"}},
                       model("limited", rpm=1),
                       model("spent", max_budget=0.000001, budget_duration="1d",
                             input_cost_per_token=0.001, output_cost_per_token=0.001),
                       *extra],
        # Without retries the router refuses at once what it would otherwise wait out.
        "router_settings": {"routing_strategy": "usage-based-routing-v2",
                            "enable_pre_call_checks": True, "num_retries": 0},
        "litellm_settings": {"num_retries": 0, "callbacks": "recorder.recorder"},
        "general_settings": {"master_key": MASTER_KEY},
    }
    return json.dumps(config, indent=2)  # JSON is YAML


def start_gateway(where: Path, provider: FakeLLM,
                  extra: Sequence[dict[str, Any]] = ()) -> Gateway:
    """Start the proxy in front of ``provider`` (and the ``extra`` deployments of its
    ``model_list``), its files under ``where``; wait until it is healthy (it fails the
    caller with the proxy's log if it dies or never answers)."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "recorder.py").write_text(RECORDER)
    (where / "config.yaml").write_text(_config(provider, extra))
    port = free_port()  # the suite's: kept from other workers' binds and connects
    env = {k: v for k, v in os.environ.items() if k != TAG_VAR and not k.endswith("_API_KEY")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", GATEWAY_RECORD=str(where / "record.jsonl"),
               LITELLM_DONT_SHOW_FEEDBACK_BOX="true", NO_COLOR="1")
    log = where / "proxy.log"
    litellm_cli = Path(sys.executable).with_name("litellm")
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(litellm_cli), "--config", str(where / "config.yaml"), "--host", "127.0.0.1",
             "--port", str(port)], cwd=where, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    gateway = Gateway(url, process, where / "record.jsonl", log, 0.0, provider)
    gateway.names += [str(model["model_name"]) for model in extra]
    while not _healthy(url):
        if process.poll() is not None or time.monotonic() - started > START_TIMEOUT:
            gateway.stop()
            raise RuntimeError(f"the LiteLLM Proxy did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    gateway.started_in = time.monotonic() - started
    return gateway


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health/liveliness", timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False
