"""The client side against the reference server-everything (npm), beyond elicitation and
sampling (tests/test_elicitation.py, tests/test_sampling.py): the roots it is given, the
progress of a long operation, a tiny image reaching a model that takes images, and the
hints of its tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, TAG_VAR, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import START, everything
from tests.test_client_side import hub_of
from tests.test_elicitation import everything_config, run
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide

pytestmark = pytest.mark.slow


def test_roots_progress_and_an_image(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[
        FakeToolCall("asking__get-roots-list", {}, id="r"),
        FakeToolCall("asking__trigger-long-running-operation", {"duration": 1, "steps": 2},
                     id="p"),
        FakeToolCall("asking__get-tiny-image", {}, id="i")]), Reply(text="seen"))
    conf = everything_config(tmp_path, fake_llm)
    conf.write_text(conf.read_text().replace("[model]\n", "[model]\nvision = true\n"),
                    encoding="utf-8")
    done = run(conf, "show me")  # run() works in the repository: the project directory
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    told = {e["id"]: e["text"] for e in events if e["type"] == "tool_result"}
    assert ROOT.as_uri() in told["r"]
    steps = [(e["progress"], e["total"]) for e in events
             if e["type"] == "progress" and e["id"] == "p"]
    assert steps == [(1.0, 2.0), (2.0, 2.0)]
    assert "[image: image/png," in told["i"] and len(told["i"]) < 400
    shown = fake_llm.requests[1]["messages"][-1]
    assert shown["role"] == "user"
    assert shown["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")


@pytest.mark.anyio
async def test_the_hints_of_its_tools(tmp_path: Path) -> None:
    server = ServerConfig(command=everything(), args=["stdio"], env=tagged_env(),
                          startup_timeout=START)
    async with hub_of({"every": server}, tmp_path,
                      client_side=lambda n, c: ClientSide()) as hub:
        hints = {s.tool: s.hints for s in hub.specs()}
    assert hints["echo"] == ("read-only",)
    assert "open-world" in hints["gzip-file-as-resource"]
    assert "trigger-url-elicitation" not in hints  # registered only for clients that elicit


def test_the_servers_command_declares_what_the_app_declares(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`tui-agent servers` opens the servers as the app does (elicitation, sampling and
    roots declared), so it lists the tools server-everything registers only for clients
    that offer them, instead of 13 of its 17."""
    from tui_agent.cli import main

    conf = tmp_path / "config.toml"
    conf.write_text(f'[servers.every]\ncommand = {json.dumps(everything())}\n'
                    f'args = ["stdio"]\nenv = {{ {TAG_VAR} = "{tagged_env()[TAG_VAR]}" }}\n',
                    encoding="utf-8")
    assert main(["servers", "--config", str(conf)]) == 0
    out = capsys.readouterr().out
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  every__")}
    assert {"every__trigger-elicitation-request", "every__trigger-sampling-request",
            "every__trigger-url-elicitation", "every__get-roots-list"} <= listed, out
