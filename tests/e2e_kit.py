"""Driving ``tui-agent run`` end to end through a provider fake (Anthropic, Gemini, Ollama):
a config file naming the fake and a real MCP server (tests/fakes/mcp_server.py over stdio),
one headless run through the command line's own entry point (:func:`tui_agent.cli.main`,
in this process: litellm is imported once for the whole module) read back as its JSON
events, and the few questions the tests ask of those events.

A test module imports the fixtures it needs by name (``from tests.e2e_kit import
entry_point``) and names them once at module level (``_ = entry_point``), as
tests/providers.py's fixtures are used.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FAKE_MODEL, ROOT, TAG_VAR
from tests.local_kit import local_table
from tests.zygote import module
from tui_agent.cli import main
from tui_agent.core.session import Conversation, load


@pytest.fixture
def entry_point(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What ``main`` touches in the process: its SIGTERM handler is put back afterwards,
    and stdin is an empty pipe (no terminal: nothing is asked)."""
    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    yield
    signal.signal(signal.SIGTERM, before)


def toml(value: Any) -> str:
    return json.dumps(value)


def write_config(path: Path, model: str, api_base: str, *, api_key: str | None = None,
                 server: bool = True, auto: bool = False, **settings: Any) -> Path:
    """A config file: ``[model]`` for the fake (no retries unless ``max_retries`` is given,
    and quick ones when it is) with ``settings`` as further ``[model]`` keys, and, with
    ``server``, the MCP server ``t`` (tests/fakes/mcp_server.py) with only its ``add`` and
    ``echo`` tools allowed (and ``add`` approved in advance with ``auto``, for the app,
    which would ask)."""
    values: dict[str, Any] = {"name": model, "api_base": api_base, "max_retries": 0,
                              "retry_backoff": 0.01, "timeout": 20}
    if api_key:
        values["api_key"] = api_key
    values.update(settings)
    lines = ["[model]", *(f"{k} = {toml(v)}" for k, v in values.items())]
    if server:
        command, *argv = module("tests.fakes.mcp_server")
        lines += ["", "[servers.t]", f"command = {toml(command)}", f"args = {toml(argv)}",
                  f"cwd = {toml(str(ROOT))}",
                  f"env = {{ {TAG_VAR} = {toml(os.environ[TAG_VAR])} }}",
                  'allow = ["add", "echo"]', "startup_timeout = 30"]
        if auto:
            lines.append('auto = ["add"]')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def local_config(tmp_path: Path, base_url: str, table: str | None = None) -> Path:
    """``tmp_path/c.toml``: the scripted model at ``base_url`` and no server but the
    built-in one, configured by ``table`` (:func:`~tests.local_kit.local_table` unless
    given)."""
    path = write_config(tmp_path / "c.toml", FAKE_MODEL, base_url, api_key="sk-test-key",
                        server=False)
    with path.open("a") as f:
        f.write(local_table() if table is None else table)
    return path


@dataclass
class Run:
    """One ``tui-agent run --output jsonl``: its exit code, events and stderr."""

    code: int
    events: list[dict[str, Any]]
    err: str

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    @property
    def session(self) -> str:
        """The conversation's id (for ``--resume``)."""
        return str(self.of("session")[0]["id"])

    @property
    def done(self) -> dict[str, Any]:
        last = self.events[-1]
        assert last["type"] == "done", self.events
        return last

    @property
    def usage(self) -> dict[str, Any]:
        return dict(self.done["usage"])

    def text(self) -> str:
        return "".join(e["delta"] for e in self.of("text"))

    def reasoning(self) -> str:
        return "".join(e["delta"] for e in self.of("reasoning"))

    def kinds(self) -> list[str]:
        """The event types in order, the bookkeeping ones (context, notices) left out."""
        return [e["type"] for e in self.events if e["type"] not in ("context", "notice")]

    def conversation(self) -> Conversation:
        """The session file as ``--resume`` reads it."""
        return load(Path(self.of("session")[0]["path"]))


def run(capsys: pytest.CaptureFixture[str], config: Path, prompt: str | None,
        *flags: str) -> Run:
    """``tui-agent run --config CONFIG --output jsonl --approve auto FLAGS PROMPT``."""
    capsys.readouterr()
    argv = ["run", "--config", str(config), "--output", "jsonl", "--approve", "auto", *flags]
    code = main([*argv, *([prompt] if prompt is not None else [])])
    out = capsys.readouterr()
    events = [json.loads(line) for line in out.out.splitlines() if line.strip()]
    return Run(code, events, out.err)


def ok(result: Run) -> Run:
    """``result``, once it is known to have ended well (else its events and stderr)."""
    assert result.code == 0 and result.done["reason"] == "end", (result.events, result.err)
    assert not result.of("error"), result.of("error")
    return result


def tool_round_trip(result: Run, name: str = "t__add", answer: str = "5") -> None:
    """One tool call, approved, that ran and answered ``answer``; reasoning before the
    call and before the text."""
    calls, results = result.of("tool_call"), result.of("tool_result")
    assert [c["name"] for c in calls] == [name], calls
    assert [(r["is_error"], r["text"]) for r in results] == [(False, answer)], results
    kinds = result.kinds()
    assert kinds.index("reasoning") < kinds.index("tool_call") < kinds.index("text"), kinds
    last_reasoning = len(kinds) - 1 - kinds[::-1].index("reasoning")
    assert kinds.index("tool_result") < last_reasoning < kinds.index("text"), kinds
