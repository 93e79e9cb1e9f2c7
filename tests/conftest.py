"""Shared test set-up: every test runs in its own XDG tree, with no provider keys,
and no connection may leave the machine (loopback and Unix sockets only)."""

from __future__ import annotations

import contextlib
import gc
import ipaddress
import os
import signal
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import zygote
from tests.fakes.llm_server import FakeLLM
from tests.zygote import module
from tui_agent.config.models import ModelSettings, ServerConfig

ROOT = Path(__file__).resolve().parents[1]
TAG_VAR = "TUI_AGENT_TEST_TAG"
"""Every server a test starts carries this variable (with a value unique to the test) in
its environment, which its children inherit: the process table then tells whether a
test left any server behind."""

REQUIRE_ALL = os.environ.get("TUI_AGENT_TEST_REQUIRE_ALL") == "1"
"""Set by .ci/run: a test that would skip for a missing tool (docker, npm) fails instead."""

FAKE_MODEL = "openai/fake-model"


def need(available: bool, what: str) -> None:
    """Skip when ``what`` is missing on a developer's machine; in CI, fail."""
    if not available:
        if REQUIRE_ALL:
            pytest.fail(f"{what} is required in CI (TUI_AGENT_TEST_REQUIRE_ALL=1) but missing")
        pytest.skip(f"{what} is not available on this machine")


def pytest_configure(config: pytest.Config) -> None:
    """Our modules compiled once, before any worker starts: with PYTHONDONTWRITEBYTECODE
    set (as on these machines) each of the suite's hundreds of processes (the command, the
    fake servers) compiled them again, about 0.1 s of CPU each."""
    if hasattr(config, "workerinput"):
        return  # a pytest-xdist worker: the controller did it
    import compileall

    for package in ("tui_agent", "tests"):
        compileall.compile_dir(ROOT / package, quiet=2, workers=1)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The ``tui-agent`` zygote (tests/zygote) of this process, where tests run: each
    xdist worker has its own; the controller of a parallel run runs no test."""
    config = session.config
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        zygote.start()


def pytest_sessionfinish(session: pytest.Session) -> None:
    zygote.stop()


def pytest_runtest_setup(item: pytest.Item) -> None:
    zygote.ensure()
    _freeze_what_was_imported()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``pytest -n auto``: the suite waits far more than it computes (on processes it
    starts, servers, the pilot's frames), so two workers per CPU, and at least four."""
    return max(4, 2 * (os.cpu_count() or 1))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first, the longest (ruff, mypy, the benchmarks) first of all: with
    parallel workers, the last minute is then many short tests spread over all of them,
    not one long test that a worker took up last."""
    def weight(item: pytest.Item) -> int:
        if item.path.name == "test_quality.py":
            return 0
        return 1 if item.get_closest_marker("slow") else 2

    items.sort(key=weight)  # stable: within a weight, the order of the files


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
    # Only the tests of the built-in server start it (they delete this): the others count
    # and start the servers they configure, as before it existed.
    monkeypatch.setenv("TUI_AGENT_NO_BUILTIN", "1")
    # No keyring but the ones tests name: a developer's own (a desktop Secret Service, say)
    # must not receive test logins. keyring reads this once per process, at first use.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    # The developer's own ~/.claude/skills and ~/.agents/skills are never offered to a
    # test's model (HOME itself stays: npm, git and docker read their files from it).
    monkeypatch.setattr("tui_agent.custom.skills.home", lambda env=None: home)
    return home


@pytest.fixture(autouse=True)
def learned_here() -> Iterator[None]:
    """The secrets a test's logins learn in this process (OAuth tokens, a key's private
    members) are forgotten after it: the set is the process's, and a later test's masking
    must not see them (a stream holds back a tail that could begin one: a learned
    ``eyJ...`` token held back the last ``e`` of a later test's reply)."""
    from tui_agent.config import interpolate

    before = set(interpolate._LEARNED)
    yield
    interpolate._LEARNED.intersection_update(before)


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


XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def host_visible() -> Path:
    """A folder a sandboxed command sees as the host has it: not under ``/tmp``, which
    bwrap replaces with an empty one of its own (so a write there, or a secret, would
    vanish for a reason that is not the one a test means). The repository when it is
    not under ``/tmp`` itself (a clone in ``/tmp`` is), else ``/var/tmp``, else the home."""
    for folder in (ROOT, Path("/var/tmp"), Path.home()):
        real = folder.resolve()
        if not real.is_relative_to("/tmp") and os.access(real, os.W_OK):
            return real
    raise AssertionError("no writable folder outside /tmp for the sandbox tests")


def tagged_env(**extra: str) -> dict[str, str]:
    """Environment entries for a server config: the current test's tag and XDG folders (a
    stdio server is started with a few variables only: the built-in server would keep its
    checkpoints in the real home), plus ``extra``."""
    xdg = {name: os.environ[name] for name in XDG_VARS if name in os.environ}
    return {TAG_VAR: os.environ[TAG_VAR], **xdg, **extra}


def fake_server(*args: str, **config: Any) -> ServerConfig:
    """Our hostile MCP server (tests/fakes/mcp_server.py) over stdio."""
    env = tagged_env(**config.pop("env", {}))
    command, *argv = module("tests.fakes.mcp_server", *args)
    # Its imports took past the default 10 s with a second suite on the 2 CPUs (a code-mode
    # test then found no tools at all): a bound, not a speed test. A test of the start's
    # own limit gives its startup_timeout.
    config.setdefault("startup_timeout", 60)
    return ServerConfig(command=command, args=argv, cwd=str(ROOT), env=env, **config)


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose environment carries ``tag``."""
    found = []
    needle = f"{TAG_VAR}={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes():
                continue
            if (entry / "stat").read_text().split(") ")[-1].startswith("Z"):
                continue  # a zombie has exited; only its parent's wait is missing
        except OSError:
            continue
        found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_leftover_servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """After every test, no process it started with the tag may still run."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG_VAR, tag)
    yield tag
    deadline = time.monotonic() + 5
    left = tagged_processes(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = tagged_processes(tag)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"the test left server processes running: {left}"


class _Frozen:
    modules = 0


def _freeze_what_was_imported() -> None:
    """Move what the modules imported so far hold into the collector's permanent
    generation (``gc.freeze``), after collecting what earlier tests left: this worker's
    heap is litellm, textual, the MCP SDK and pydantic many times over, and every full
    collection (the app runs one after each reply, Python one as the heap grows) walked
    all of it, tens of times a test. Done again once a test has imported many new
    modules (litellm at its first completion, textual with the first app), which is what
    the heap is made of; objects that tests create stay collectable as ever."""
    if len(sys.modules) - _Frozen.modules < 200:
        return
    _Frozen.modules = len(sys.modules)
    gc.collect()
    gc.freeze()
