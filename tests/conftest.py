"""Shared test set-up: every test runs in its own XDG tree, with no provider keys,
and no connection may leave the machine (loopback and Unix sockets only)."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLLM
from tui_agent.config.models import ModelSettings

REQUIRE_ALL = os.environ.get("TUI_AGENT_TEST_REQUIRE_ALL") == "1"
"""Set by .ci/run: a test that would skip for a missing tool (docker, npm) fails instead."""

FAKE_MODEL = "openai/fake-model"


def need(available: bool, what: str) -> None:
    """Skip when ``what`` is missing on a developer's machine; in CI, fail."""
    if not available:
        if REQUIRE_ALL:
            pytest.fail(f"{what} is required in CI (TUI_AGENT_TEST_REQUIRE_ALL=1) but missing")
        pytest.skip(f"{what} is not available on this machine")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG dirs under tmp_path; no user config, no provider keys."""
    home = tmp_path / "home"
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                     ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.delenv("TUI_AGENT_CONFIG", raising=False)
    for key in list(os.environ):
        if key.endswith(("_API_KEY", "_API_TOKEN")) or key in ("OPENAI_BASE_URL",
                                                                "OPENAI_API_BASE"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return home


_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            allowed = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            allowed = False
        if not allowed:
            raise ConnectionRefusedError(f"tests may not reach {host}: loopback only")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def model_for(server: FakeLLM, **overrides: Any) -> ModelSettings:
    """Settings that point litellm at the fake server, with fast retries."""
    values: dict[str, Any] = {"name": FAKE_MODEL, "api_base": server.base_url,
                              "api_key": "sk-test-key", "max_retries": 2,
                              "retry_backoff": 0.01, "timeout": 20}
    values.update(overrides)
    return ModelSettings(**values)
