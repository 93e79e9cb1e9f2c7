"""Multi-round-trip requests (SEP-2322): in the 2026-07-28 protocol a server asks the
client for something by answering a call with ``input_required`` and the requests it
embeds, and the client calls again with the answers. Those embedded requests must reach
the same person-facing paths as a request made on the open session (2025-11-25): the
``--elicit`` and ``--sampling`` policies and the project's roots headless, the form and
sampling modals in the app. Against tests/fakes/mrtr_server.py, pinned to 2026-07-28 (no
other way for a request to reach the client there)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_elicitation import results, run

pytestmark = pytest.mark.slow

BOOKED = '{"guests":2,"time":"20:00","terrace":false,"name":"Ada"}'


def mrtr_config(tmp_path: Path, fake: FakeLLM) -> Path:
    """A config whose one server is the fake above, in the 2026-07-28 protocol only."""
    path = tmp_path / "config.toml"
    path.write_text(
        f'[model]\nname = "openai/fake-model"\napi_base = "{fake.base_url}"\n'
        f'api_key = "sk-test"\n\n[servers.mrtr]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = ["-m", "tests.fakes.mrtr_server"]\ncwd = {json.dumps(str(ROOT))}\n'
        'auto = ["*"]\nstartup_timeout = 30\nprotocol = "2026-07-28"\n', encoding="utf-8")
    return path


def test_a_headless_run_answers_embedded_requests_by_its_flags(tmp_path: Path,
                                                               fake_llm: FakeLLM) -> None:
    """One run, three embedded requests: the form gets its defaults (``--elicit
    defaults``), the model answers the server (``--sampling allow``), the roots are the
    project's; each said on stderr as a standalone request is."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("mrtr__book", {}, id="b")]),
                  Reply(tool_calls=[FakeToolCall("mrtr__haiku", {}, id="h")]),
                  Reply(text="Light on the oak grain"),  # the server's request, answered
                  Reply(tool_calls=[FakeToolCall("mrtr__roots", {}, id="r")]),
                  Reply(text="done"))
    done = run(mrtr_config(tmp_path, fake_llm), "--elicit", "defaults", "--sampling", "allow",
               "book, write, look")
    assert done.returncode == 0, done.stderr
    assert results(done.stdout) == [f"accept: {BOOKED}",
                                    "openai/fake-model wrote: Light on the oak grain",
                                    ROOT.as_uri()]
    assert "mrtr asked for input (Book a table: how many, and when?): accepted" in done.stderr
    assert "mrtr asked the model (1 message, up to 60 tokens)" in done.stderr


def test_headless_without_the_flags_embedded_requests_are_declined(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """No ``--elicit``/``--sampling`` and no terminal: the form is declined, the model is
    not lent to the server (the turn's model saw only the turn's requests)."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("mrtr__book", {}, id="b"),
                                    FakeToolCall("mrtr__haiku", {}, id="h")]),
                  Reply(text="nothing then"))
    done = run(mrtr_config(tmp_path, fake_llm), "book and write")
    assert done.returncode == 0, done.stderr
    told = {e["id"]: e["text"] for e in map(json.loads, done.stdout.splitlines())
            if e["type"] == "tool_result"}
    assert told["b"] == "decline: " and "declined the request" in told["h"], done.stdout
    assert len(fake_llm.requests) == 2
